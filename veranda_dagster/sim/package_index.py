"""A loopback simple package index (PEP 503) served from wheels on disk, and a wheel maker.

The setup step installs a repository's tools from the deployment's registries; tests and the
image's demo serve those from here instead of PyPI: ``/simple/`` lists the projects,
``/simple/<project>/`` links each wheel (relative links, with its sha256), ``/files/<wheel>``
serves it. With ``token`` set it is a private registry: every request without
``Authorization: Bearer <token>`` is a 401, as a real private index answers.

``make_wheel`` writes a minimal pure-Python wheel (no build vendor needed), so a test prepares
the exact packages it installs; ``wheels_from_pypi``-style preparation of real tools (pytest,
ruff) is the container test's job, done once on the host where PyPI is reachable.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
import zipfile
from pathlib import Path

from veranda_dagster.sim.http_fake import FakeHttpServer, FakeRequest, FakeResponse

MAX_WHEELS = 500
"""Wheels one index serves: a test index holds a handful, the demo's a few dozen."""
_WHEEL = re.compile(r"^(?P<name>[A-Za-z0-9_.]+)-(?P<version>[^-]+)-.+\.whl$")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def make_wheel(
    dest: str | Path,
    name: str,
    version: str,
    files: dict[str, str],
    *,
    console_scripts: dict[str, str] | None = None,
) -> Path:
    """A ``py3-none-any`` wheel of ``files`` (path in site-packages -> text) in ``dest``;
    ``console_scripts`` maps a command to ``module:function``."""
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    members = dict(files)
    members[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    members[f"{info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: veranda-sim\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    if console_scripts:
        lines = "".join(f"{cmd} = {target}\n" for cmd, target in console_scripts.items())
        members[f"{info}/entry_points.txt"] = "[console_scripts]\n" + lines
    record = []
    for path, text in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    members[f"{info}/RECORD"] = "\n".join(record) + "\n"
    out = Path(dest) / f"{dist}-{version}-py3-none-any.whl"
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, text in members.items():
            archive.writestr(path, text)
    return out


class PackageIndex(FakeHttpServer):
    """``with PackageIndex(wheels) as index: index.base_url + "/simple/"``."""

    name = "package-index"

    def __init__(self, wheel_dir: str | Path, token: str | None = None) -> None:
        self.wheel_dir = Path(wheel_dir)
        self.token = token
        self.unauthorized = 0
        super().__init__()

    def _wheels(self) -> dict[str, list[Path]]:
        found: dict[str, list[Path]] = {}
        for path in sorted(self.wheel_dir.glob("*.whl"))[:MAX_WHEELS]:
            match = _WHEEL.match(path.name)
            if match:
                found.setdefault(normalize(match["name"]), []).append(path)
        return found

    def handle(self, request: FakeRequest) -> FakeResponse:
        if self.token is not None and request.bearer() != self.token:
            self.unauthorized += 1
            return FakeResponse(401, "unauthorized\n", {"www-authenticate": "Bearer"})
        if request.method not in ("GET", "HEAD"):
            return FakeResponse(405, "read-only index\n")
        wheels = self._wheels()
        parts = [p for p in request.path.split("/") if p]
        if parts == ["simple"]:
            links = "".join(f'<a href="{p}/">{p}</a>\n' for p in sorted(wheels))
            return FakeResponse(200, _page(links), content_type="text/html")
        if len(parts) == 2 and parts[0] == "simple":
            project = wheels.get(normalize(parts[1]))
            if not project:
                return FakeResponse(404, "no such project\n")
            links = "".join(
                f'<a href="../../files/{html.escape(w.name)}#sha256='
                f'{hashlib.sha256(w.read_bytes()).hexdigest()}">{html.escape(w.name)}</a>\n'
                for w in project
            )
            return FakeResponse(200, _page(links), content_type="text/html")
        if len(parts) == 2 and parts[0] == "files":
            path = self.wheel_dir / parts[1]
            if path.name == parts[1] and path.suffix == ".whl" and path.is_file():
                return FakeResponse(200, path.read_bytes(), content_type="application/zip")
        return FakeResponse(404, "not found\n")


def _page(links: str) -> str:
    return f"<!DOCTYPE html>\n<html><body>\n{links}</body></html>\n"


MAX_SERVE_S = 3600.0
"""How long ``python -m veranda_dagster.sim.package_index`` serves before it exits by itself
(a demo run inside the image takes a minute)."""


def main(argv: list[str] | None = None) -> int:
    """Serve a folder of wheels on a free loopback port and print the index URL: ``python -m
    veranda_dagster.sim.package_index WHEELS`` (the image's demo step)."""
    import argparse
    import time

    parser = argparse.ArgumentParser(prog="veranda-package-index")
    parser.add_argument("wheels")
    parser.add_argument("--serve-s", type=float, default=MAX_SERVE_S)
    args = parser.parse_args(argv)
    index = PackageIndex(args.wheels)
    with index:
        print(f"{index.base_url}/simple/", flush=True)
        time.sleep(min(args.serve_s, MAX_SERVE_S))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
