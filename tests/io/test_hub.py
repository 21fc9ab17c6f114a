"""push_folder (parakit.io.hub) against a local stand-in of the Hub's HTTP API: huggingface_hub's
own requests go to 127.0.0.1, the upload itself is intercepted, and nothing reaches the network."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from parakit.errors import WriteError
from parakit.io.hub import push_folder

huggingface_hub = pytest.importorskip("huggingface_hub")
constants = pytest.importorskip("huggingface_hub.constants")


class _Hub(BaseHTTPRequestHandler):
    """Answers validate-yaml and repo creation; ``status`` decides how (set per test)."""

    calls: ClassVar[list[tuple[str, str, dict]]] = []
    validate_status = 200
    create_status = 200

    def _answer(self, status: int, body: dict | str) -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header(
            "Content-Type", "application/json" if isinstance(body, dict) else "text/plain"
        )
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        payload = json.loads(self.rfile.read(length) or b"{}")
        type(self).calls.append(("POST", self.path, payload))
        if self.path == "/api/validate-yaml":
            status = type(self).validate_status
            self._answer(status, "" if status == 200 else 'Error: "license" must be one of [...]')
        elif self.path == "/api/repos/create":
            status = type(self).create_status
            if status == 200:
                kind = payload.get("type")
                prefix = "datasets/" if kind == "dataset" else ""
                url = f"http://{self.headers['Host']}/{prefix}{payload['organization']}/{payload['name']}"
                self._answer(200, {"url": url})
            else:
                self._answer(status, {"error": "Invalid credentials in Authorization header"})
        else:
            self._answer(404, {"error": "not here"})

    def do_GET(self) -> None:
        type(self).calls.append(("GET", self.path, {}))
        self._answer(401, {"error": "Invalid credentials in Authorization header"})

    def log_message(self, *args: object) -> None:  # quiet
        pass


@pytest.fixture
def hub(monkeypatch):
    """The stand-in Hub as huggingface_hub's endpoint; uploads recorded instead of sent."""
    _Hub.calls = []
    _Hub.validate_status = _Hub.create_status = 200
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    uploads: list[dict] = []

    def upload_folder(self, *, folder_path, repo_id, repo_type=None, commit_message=None, **_):
        uploads.append(
            {"folder": folder_path, "repo_id": repo_id, "repo_type": repo_type,
             "message": commit_message, "endpoint": self.endpoint}
        )  # fmt: skip

    monkeypatch.setattr(huggingface_hub.HfApi, "upload_folder", upload_folder)
    yield endpoint, uploads
    server.shutdown()
    server.server_close()


def _folder(tmp_path, card: str = "---\nlicense: mit\n---\n# Hi\n"):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "README.md").write_text(card)
    (folder / "data.txt").write_text("x")
    return folder


def test_push_validates_the_card_creates_the_repo_and_uploads(tmp_path, hub):
    endpoint, uploads = hub
    folder = _folder(tmp_path)
    url = push_folder(folder, "me/corpus", repo_type="dataset", token="hf_test", private=True)
    assert url == f"{endpoint}/datasets/me/corpus"
    posts = {path: payload for method, path, payload in _Hub.calls if method == "POST"}
    assert posts["/api/validate-yaml"] == {
        "repoType": "dataset",
        "content": "---\nlicense: mit\n---\n# Hi\n",
    }
    assert posts["/api/repos/create"] == {
        "name": "corpus",
        "organization": "me",
        "visibility": "private",
        "type": "dataset",
    }
    assert uploads == [
        {"folder": str(folder), "repo_id": "me/corpus", "repo_type": "dataset",
         "message": "Upload with parakit", "endpoint": endpoint}
    ]  # fmt: skip


def test_a_card_the_hub_rejects_stops_before_the_upload(tmp_path, hub):
    _, uploads = hub
    _Hub.validate_status = 400
    with pytest.raises(WriteError) as err:
        push_folder(_folder(tmp_path), "me/corpus", repo_type="dataset", token="hf_test")
    assert err.value.code == "E125" and "rejected the card" in str(err.value)
    assert "license" in str(err.value)
    assert uploads == [] and [c[1] for c in _Hub.calls if c[0] == "POST"] == ["/api/validate-yaml"]


def test_no_valid_token_says_how_to_log_in(tmp_path, hub):
    _, uploads = hub
    _Hub.create_status = 401
    with pytest.raises(WriteError) as err:
        push_folder(_folder(tmp_path), "me/model", token="hf_bad")
    message = str(err.value)
    assert err.value.code == "E125" and "HTTP 401" in message and "hf auth login" in message
    assert uploads == []


def test_offline_mode_and_no_network_are_one_clear_error(tmp_path, hub, monkeypatch):
    folder = _folder(tmp_path)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(WriteError) as err:
        push_folder(folder, "me/model", token="hf_test")
    assert err.value.code == "E125" and "offline" in str(err.value)
    assert _Hub.calls == []
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    # nothing listens on the discard port of this machine: the Hub cannot be reached
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(WriteError) as err:
        push_folder(folder, "me/model", token="hf_test")
    assert err.value.code == "E125" and "cannot be reached" in str(err.value)


def test_a_repo_id_must_be_owner_slash_name(tmp_path):
    with pytest.raises(WriteError) as err:
        push_folder(_folder(tmp_path), "me/my corpus")
    assert err.value.code == "E126"
