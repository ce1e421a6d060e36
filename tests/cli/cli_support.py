"""Shared by the CLI tests: run the kforge binary, the "one clear error line" assertion, and a
loopback server imitating an OpenAI-compatible provider."""
import http.server
import json
import os
import subprocess
import threading

KFORGE = os.environ["KFORGE_BIN"]
MODELS = os.environ["KFORGE_TEST_MODELS_DIR"]


def kforge(*args, env=None):
    return subprocess.run([KFORGE, *args], capture_output=True, text=True, timeout=300, env=env)


class ErrorLineAssertions:
    """Mixin for unittest.TestCase."""

    def assert_one_error_line(self, result, *needles, code=1):
        self.assertEqual(result.returncode, code, result.stderr)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, f"expected one line, got: {result.stderr!r}")
        self.assertTrue(lines[0].startswith("kforge: error: "), lines[0])
        for needle in needles:
            self.assertIn(needle, lines[0])
        self.assertNotIn("Traceback", result.stderr)
        self.assertEqual(result.stdout, "")


def fake_openai_server(testcase, reply_text, prompt_tokens=10, completion_tokens=10):
    """A Chat Completions server on loopback that answers every request with `reply_text`; it stops
    when `testcase` is cleaned up. Returns (port, requests): each request as
    {"path", "auth" (the Authorization header), "body" (the parsed JSON)}, in arrival order."""
    requests = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
            payload = json.dumps({
                "id": "chatcmpl-%d" % len(requests), "object": "chat.completion",
                "model": body.get("model", "fake"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply_text},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    testcase.addCleanup(server.server_close)
    testcase.addCleanup(server.shutdown)
    return server.server_address[1], requests
