"""Derive ``veranda-bwrap.json`` from Docker's default seccomp profile.

Why a derived profile and not ``Unconfined``: bubblewrap, the sandbox every repository command
and agent CLI runs in, builds its view with a new user namespace and mounts. Docker's default
profile (and Kubernetes' ``RuntimeDefault``, which containerd and CRI-O take from it) allows
those calls only to a container holding ``CAP_SYS_ADMIN``, which the product's pods never
get, so without this profile ``VERANDA_SANDBOX=bwrap`` fails closed on every command. Dropping
seccomp altogether would also open the ~50 syscalls the default profile refuses for good
reasons (``kexec_load``, ``bpf``, ``open_by_handle_at``, ``keyctl``...). This profile is the
default one with exactly ``BWRAP_SYSCALLS`` allowed unconditionally, nothing else changed.

The input is Docker's own file, never one written from memory: Debian's
``golang-github-docker-docker-dev`` (the source of the ``docker.io`` engine it pairs with)
ships it as ``/usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json``
(upstream: moby/moby ``profiles/seccomp/default.json``, Apache-2.0).

    apt-get download golang-github-docker-docker-dev && dpkg-deb -x golang-*.deb pkg
    python deploy/seccomp/make_profile.py \\
        pkg/usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json \\
        deploy/seccomp/veranda-bwrap.json
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path
from typing import Any

BWRAP_SYSCALLS: dict[str, str] = {
    "clone": "new user/pid/ipc/uts/net/cgroup namespaces (the default allows clone only "
    "without CLONE_NEW* flags)",
    "unshare": "bwrap's unshare of the user namespace and the others (--unshare-*)",
    "mount": "the sandbox's root: making / a slave, tmpfs, read-only binds, a fresh procfs",
    "pivot_root": "switching into the newly built root",
    "umount2": "detaching the old root after pivot_root",
    "sethostname": "--hostname in the new UTS namespace",
}
"""What bubblewrap needs beyond the default profile, and why: each one, left out, makes the
sandbox fail to start (tests/container/test_image.py proves it one by one). Not added, because
bwrap as the product runs it does without them: ``clone3`` (the default's ENOSYS makes libc fall
back to ``clone``), ``chroot``, ``setns`` (no ``--userns``/``--pidns``) and the new mount API
(``open_tree``, ``move_mount``, ``fsopen``...)."""

COMMENT = (
    "veranda: allowed for bubblewrap (deploy/seccomp/make_profile.py); every other rule is "
    "Docker's default profile"
)


def derive(default: dict[str, Any]) -> dict[str, Any]:
    """Docker's ``default`` with ``BWRAP_SYSCALLS`` moved out of every conditional rule (a
    syscall named by two rules with different actions is an error for libseccomp) into one
    unconditional allow rule."""
    profile = copy.deepcopy(default)
    rules = []
    for rule in profile["syscalls"]:
        names = [name for name in rule["names"] if name not in BWRAP_SYSCALLS]
        if names:
            rules.append({**rule, "names": names})
    rules.append(
        {
            "names": sorted(BWRAP_SYSCALLS),
            "action": "SCMP_ACT_ALLOW",
            "args": [],
            "comment": COMMENT,
            "includes": {},
            "excludes": {},
        }
    )
    profile["syscalls"] = rules
    return profile


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("default", type=Path, help="Docker's profiles/seccomp/default.json")
    parser.add_argument("output", type=Path, help="where to write veranda-bwrap.json")
    args = parser.parse_args(argv)
    profile = derive(json.loads(args.default.read_text()))
    args.output.write_text(json.dumps(profile, indent=2) + "\n")


if __name__ == "__main__":
    main()
