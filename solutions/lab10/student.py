"""Lab10 — HTTP: read the first line of a request, write a whole response.

An HTTP/1.1 exchange is plain text over a TCP byte stream. The client sends

    POST /v1/chat/completions HTTP/1.1\\r\\n        <- the request line
    Host: 127.0.0.1:8080\\r\\n                      <- headers, one per line
    Content-Length: 27\\r\\n
    \\r\\n                                          <- a blank line ends the head
    {"messages": [...]}                           <- exactly Content-Length bytes

and the server answers

    HTTP/1.1 200 OK\\r\\n                           <- the status line
    Content-Type: application/json\\r\\n
    Content-Length: 15\\r\\n                        <- the body's size in BYTES
    Connection: close\\r\\n
    \\r\\n
    {"status":"ok"}

Every line ends with CRLF ("\\r\\n"), never with a bare "\\n". Run `make test` in this
folder after every change; `TASK.md` explains each function.

Plain string and bytes operations are enough (`str.split`, `str.isascii`, f-strings,
`str.encode`; `re` if you like). `framework.http_protocol` has the framework's own versions
of these two functions: they are off limits here, the point is to write them.
"""

from __future__ import annotations

# BEGIN SOLUTION
import re

METHOD = re.compile(r"[A-Z]+")  # uppercase ASCII letters only
PATH = re.compile(r"[\x21-\x7e]+")  # printable ASCII, no space
VERSION = re.compile(r"HTTP/[0-9]\.[0-9]")  # [0-9], not \d: "١" is a \d too
# END SOLUTION


def parse_request_line(line: str) -> tuple[str, str, str]:
    """Split a request line into its three parts.

    The line comes without its CRLF. It is valid only if it is exactly three non-empty
    parts separated by single spaces:
    - the method: one or more uppercase ASCII letters A-Z ("GET", "POST", "DELETE");
    - the path: one or more printable ASCII characters other than the space
      (codes 0x21-0x7E: "/health", "/a?b=c", "*");
    - the version: "HTTP/" + one ASCII digit + "." + one ASCII digit ("HTTP/1.1").

    Args:
        line: the request line, e.g. "GET /health HTTP/1.1".

    Returns:
        The tuple (method, path, version): ("GET", "/health", "HTTP/1.1").

    Raises:
        TypeError: if line is not a str.
        ValueError: for anything else: a CR or LF anywhere in it, one space or two spaces
            in a row, a leading or trailing space, a lowercase method, a path with
            non-ASCII characters, a version such as "HTTP/1" or "http/1.1", an empty line.
    """
    # BEGIN SOLUTION: reject CR/LF, split on single spaces, check the three parts, return them.
    if not isinstance(line, str):
        raise TypeError(f"line must be a str, got {type(line).__name__}")
    if "\r" in line or "\n" in line:
        raise ValueError(f"line must not contain CR or LF, got {line!r}")
    parts = line.split(" ")
    if len(parts) != 3:
        raise ValueError(f"line must be 'METHOD PATH VERSION' with single spaces: {line!r}")
    method, path, version = parts
    if not METHOD.fullmatch(method):
        raise ValueError(f"method must be uppercase ASCII letters, got {method!r}")
    if not PATH.fullmatch(path):
        raise ValueError(f"path must be printable ASCII without spaces, got {path!r}")
    if not VERSION.fullmatch(version):
        raise ValueError(f"version must be HTTP/<digit>.<digit>, got {version!r}")
    return method, path, version
    # END SOLUTION


def build_response(status: int, reason: str, content_type: str, body: str | bytes) -> bytes:
    """Serialise a complete HTTP/1.1 response.

    The result is, each line ending in CRLF:
        HTTP/1.1 <status> <reason>
        Content-Type: <content_type>
        Content-Length: <number of BYTES of the body>
        Connection: close
        (an empty line)
    followed by the body. A str body is sent as its UTF-8 bytes ("你好" is 6 bytes, not
    2 characters); a bytes body is sent exactly as it is.

    Args:
        status: the status code, e.g. 200 or 404.
        reason: the reason phrase, e.g. "OK" or "Not Found".
        content_type: e.g. "application/json".
        body: the body, a str or bytes.

    Returns:
        The whole response as bytes (not str), e.g.
        b"HTTP/1.1 200 OK\\r\\nContent-Type: text/plain\\r\\nContent-Length: 2\\r\\n"
        b"Connection: close\\r\\n\\r\\nhi".

    Raises:
        ValueError: if reason or content_type contains a CR or LF: such a value would
            end the line early and let its rest become a header of its own (injection).
    """
    # BEGIN SOLUTION: refuse CR/LF in reason and content_type, encode the body, join the lines.
    data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    for name, value in (("reason", reason), ("content_type", content_type)):
        if "\r" in value or "\n" in value:
            raise ValueError(f"{name} must not contain CR or LF, got {value!r}")
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(data)}\r\n"
        "Connection: close\r\n"
        "\r\n"
    )
    return head.encode("utf-8") + data
    # END SOLUTION
