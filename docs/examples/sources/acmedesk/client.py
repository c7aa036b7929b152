"""Acme Desk's REST API over the shared bounded HTTP client (``veranda_dagster.http``)."""

from __future__ import annotations

from typing import Any, ClassVar

from veranda_dagster.http.client import HttpService

MAX_LISTED = 50
"""Tickets asked for per poll; the rest comes on the next tick (the cursor moves past these)."""


class AcmeDeskClient(HttpService):
    service = "acmedesk"
    auth_rejected: ClassVar[str | None] = "Acme Desk rejected ACMEDESK_TOKEN"

    def _auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}"} if self._token else {}

    def assigned_since(self, since: str | None) -> list[dict[str, Any]]:
        params = {"limit": MAX_LISTED, **({"since": since} if since else {})}
        answer = self.json("GET", "/tickets", params=params)
        return [t for t in answer.get("tickets", []) if isinstance(t, dict)]

    def get_ticket(self, ref: str) -> dict[str, Any]:
        answer = self.json("GET", f"/tickets/{ref}")
        return answer if isinstance(answer, dict) else {}

    def post_once(self, ref: str, text: str, marker: str) -> str:
        """Post ``text`` unless a comment already carries ``marker``; the comment's id."""
        for comment in self.json("GET", f"/tickets/{ref}/comments").get("comments", []):
            if marker in str(comment.get("body", "")):
                return str(comment.get("id"))
        body = f"{text}\n\n<!-- {marker} -->"
        posted = self.json("POST", f"/tickets/{ref}/comments", json={"body": body})
        return str(posted.get("id"))
