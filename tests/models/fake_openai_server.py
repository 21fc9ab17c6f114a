"""A tiny OpenAI-compatible server for tests (not collected: no ``test_`` prefix)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    """A tiny server speaking /v1/chat/completions and /v1/completions.

    It paraphrases by upper-casing the last ``Sentence:`` of the prompt; ``failures`` is a list
    of status codes answered (in order) before it starts succeeding.
    """

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.failures: list[int] = []
        self.times: list[float] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.times.append(time.monotonic())
                server.requests.append(
                    {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                )
                if server.failures:
                    code = server.failures.pop(0)
                    self.send_response(code)
                    self.send_header("Retry-After", "0")
                    self.end_headers()
                    self.wfile.write(b'{"error": "try later"}')
                    return
                if self.path == "/v1/chat/completions":
                    prompt = body["messages"][-1]["content"]
                elif self.path == "/v1/completions":
                    prompt = body["prompt"]
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                sentence = prompt.rsplit("Sentence: ", 1)[1].split("\n")[0]
                text = f" {sentence.upper()}\n\nSentence: junk the model went on with"
                choice = (
                    {"message": {"role": "assistant", "content": text}}
                    if "chat" in self.path
                    else {"text": text}
                )
                data = json.dumps({"choices": [choice]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
