"""Keeping credentials out of what a run stores and shows.

The API key travels only in the ``Authorization`` header. Credentials written into a base URL
(``https://user:token@host/v1``, ``?api-key=...``) are removed from the endpoint that keys and
labels the cache (a ``user:token@`` is sent as HTTP basic auth, so the URL the HTTP library logs
holds none; a base URL with a query string is refused before anything is sent, see
:func:`judgekit.judging.judge.check_base_url`), and every text a run keeps (error messages,
stored answers, judgments) has the
keys it used removed: whole, or a leading part of 12 characters or more (providers often echo a
prefix of a key). A key that an endpoint transforms before echoing it (hashed, split, re-encoded
other than as HTTP basic auth) cannot be recognised.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

__all__ = ["odd_path", "public_endpoint", "scrub", "scrub_known", "split_userinfo", "url_secrets"]

_KEYLIKE = re.compile(r"\b(?:sk|key|api[-_]?key)[-_][A-Za-z0-9_\-*]{6,}", re.IGNORECASE)
_SECRET_PARAM = re.compile(r"key|token|secret|passw|sig|auth|credential", re.IGNORECASE)
_PREFIX = 12


#: characters that end a path where an API key would start: a query, a fragment, path
#: parameters (``;k=v``), and their percent-encoded forms
_PATH_BREAKS = "?#;&="


def odd_path(url: str) -> str | None:
    """What in ``url``'s path would carry a query or parameters into the path (``%3F``, ``;``,
    ``=``, ``&``, ``%23``: the spellings that send a key to a path and into logs), or None.

    Examples
    --------
    >>> odd_path("https://x.example/v1%3Fapi-key=abc"), odd_path("https://x.example/v1;key=abc")
    ("'%3F'", "';'")
    >>> odd_path("https://x.example/openai/deployments/gpt-4o") is None
    True
    """
    path = urlsplit(url).path
    for char in unquote(path):
        if char in _PATH_BREAKS or ord(char) < 32:
            return repr(_spelled(path, char))
    return None


def _spelled(path: str, char: str) -> str:
    """How ``char`` is written in ``path`` (itself, or percent-encoded)."""
    if char in path:
        return char
    code = f"%{ord(char):02X}"
    return code if code in path.upper() else char


def public_endpoint(url: str) -> str:
    """``url`` without credentials: no ``user:password@``, and the values of query parameters
    named like a key, token, secret, password or signature replaced by ``***``.

    Examples
    --------
    >>> public_endpoint("https://bob:s3cret@proxy.example/v1/")
    'https://proxy.example/v1'
    >>> public_endpoint("https://x.example/v1?api-version=2024-06-01&api-key=abc")
    'https://x.example/v1?api-version=2024-06-01&api-key=%2A%2A%2A'
    """
    parts = urlsplit(url.rstrip("/"))
    netloc = parts.netloc.rpartition("@")[2]
    path = parts.path
    if odd_path(url) is not None:   # whatever follows a query or a parameter in the path
        cut = min(i for i, c in enumerate(unquote(path)) if c in _PATH_BREAKS or ord(c) < 32)
        path = unquote(path)[:cut] + "/***"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "***" if _SECRET_PARAM.search(k) else v) for k, v in pairs])
    return urlunsplit((parts.scheme, netloc, path.rstrip("/"), query, parts.fragment))


def split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without ``user:password@``, and the (user, password) it carried (for HTTP basic
    auth, so the URL the HTTP library logs holds no password).

    Examples
    --------
    >>> split_userinfo("http://bob:s%40cret@127.0.0.1:8000/v1")
    ('http://127.0.0.1:8000/v1', ('bob', 's@cret'))
    """
    parts = urlsplit(url)
    userinfo, _, host = parts.netloc.rpartition("@")
    if not userinfo:
        return url, None
    user, _, password = userinfo.partition(":")
    return urlunsplit((parts.scheme, host, *parts[2:])), (unquote(user), unquote(password))


def basic_auth(user: str, password: str) -> str:
    """The value of an HTTP basic-auth header (``Authorization`` or ``Proxy-Authorization``,
    RFC 7617, UTF-8).

    Examples
    --------
    >>> basic_auth("bob", "s3cret")
    'Basic Ym9iOnMzY3JldA=='
    """
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def url_secrets(url: str) -> list[str]:
    """The credentials written into ``url``: user, password (decoded and as written), their HTTP
    basic-auth encoding (with and without padding), and secret-looking query values. Used for
    base URLs and for the proxy a run goes through (``HTTP(S)_PROXY``).

    Examples
    --------
    >>> url_secrets("https://bob:s3cret@proxy.example/v1")
    ['bob', 's3cret', 'Ym9iOnMzY3JldA==', 'Ym9iOnMzY3JldA']
    """
    parts = urlsplit(url)
    found: list[str] = []
    userinfo = parts.netloc.rpartition("@")[0]
    if userinfo:
        user, _, password = userinfo.partition(":")
        found += [unquote(user), unquote(password), user, password]
        token = basic_auth(unquote(user), unquote(password)).removeprefix("Basic ")
        # as sent (Basic ...), and without its padding
        found += [token, token.rstrip("=")]
    found += [v for k, v in parse_qsl(parts.query) if _SECRET_PARAM.search(k)]
    return list(dict.fromkeys(s for s in found if s))


def scrub_known(text: str, secrets: Iterable[str]) -> str:
    """Remove known secrets from ``text``: each whole, and any run of 12 or more characters that
    a secret starts with.

    Examples
    --------
    >>> scrub_known("bad key 3f9a8b7c6d5e4f****2f1a", ["3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"])
    'bad key *******2f1a'
    """
    for secret in secrets:
        if not secret or len(secret) < 6:
            continue
        if secret in text:
            text = text.replace(secret, "***")
        if len(secret) >= 2 * _PREFIX and secret[:_PREFIX] in text:
            text = _scrub_prefixes(text, secret)
    return text


def _scrub_prefixes(text: str, secret: str) -> str:
    out, start = [], 0
    while True:
        at = text.find(secret[:_PREFIX], start)
        if at < 0:
            break
        end = at + _PREFIX
        while end < len(text) and end - at < len(secret) and text[end] == secret[end - at]:
            end += 1
        out += [text[start:at], "***"]
        start = end
    return "".join(out) + text[start:]


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """Remove API keys from an error message: the known ones (see :func:`scrub_known`), and
    key-like tokens such as ``sk-...``.

    Examples
    --------
    >>> scrub("Incorrect API key provided: sk-proj-abc123********xyz9.")
    'Incorrect API key provided: sk-***.'
    """
    text = scrub_known(text, secrets)
    return _KEYLIKE.sub(lambda m: m.group(0).split("-")[0].split("_")[0] + "-***", text)
