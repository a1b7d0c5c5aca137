"""A real HTTP server on 127.0.0.1 serving price feeds with ETags, counting what it sent."""

import hashlib
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class CountingFeedServer:
    """Serves ``feeds[path]`` with a strong ETag of its bytes; answers ``If-None-Match`` with 304.

    A path in ``last_modified`` is served with that ``Last-Modified`` and no ETag instead, and
    answers a matching ``If-Modified-Since`` with 304. ``full`` and ``not_modified`` count the
    200 and 304 answers per path; ``delay_s`` holds each answer back (to keep a refresh busy while
    another one starts).
    """

    def __init__(self) -> None:
        self.feeds: dict[str, bytes] = {}
        self.last_modified: dict[str, str] = {}
        self.full: dict[str, int] = {}
        self.not_modified: dict[str, int] = {}
        self.delay_s = 0.0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                body = server.feeds.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                if server.delay_s:
                    time.sleep(server.delay_s)
                stamp = server.last_modified.get(self.path)
                if stamp is None:
                    header = "ETag", '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
                    same = self.headers.get("If-None-Match") == header[1]
                else:
                    header = "Last-Modified", stamp
                    same = self.headers.get("If-Modified-Since") == stamp
                if same:
                    server.not_modified[self.path] = server.not_modified.get(self.path, 0) + 1
                    self.send_response(304)
                    self.send_header(*header)
                    self.end_headers()
                    return
                server.full[self.path] = server.full.get(self.path, 0) + 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header(*header)
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def __enter__(self) -> "CountingFeedServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
