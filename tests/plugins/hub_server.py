"""A Hub-compatible HTTP server on 127.0.0.1 for tests, written with the standard library only.

prefbuild publishes with the unmodified ``huggingface_hub``/``datasets`` client code, and the
real Hub cannot be reached from test machines. This server speaks the subset of the Hub API
those clients use for pushing and loading a dataset: repo creation and info, the pre-upload
check, the git-LFS batch API (classic, not Xet), NDJSON commits, YAML validation, tree and
paths-info listings, and ``resolve`` downloads with range requests.

``huggingface_hub`` and ``datasets`` read ``HF_ENDPOINT`` when they are imported, and the port is
only known at run time, so the server socket is bound when this module is imported (pytest
imports it through ``pytest_plugins`` before any test module) and ``HF_ENDPOINT``, a dummy
``HF_TOKEN`` and a throw-away ``HF_HOME`` are set right then. The ``hub_server`` fixture starts
serving on that socket for the whole session.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
import yaml

TEST_TOKEN = "hf_prefbuildloopbacktesttoken"
TEST_USER = "prefbuild-tester"
LFS_SUFFIXES = (".parquet", ".arrow", ".bin", ".safetensors", ".gz", ".zip", ".tar")
GITATTRIBUTES = (
    b"*.parquet filter=lfs diff=lfs merge=lfs -text\n*.arrow filter=lfs diff=lfs merge=lfs -text\n"
)


@dataclass
class Blob:
    """A file in a commit: regular files carry their bytes, LFS files point at an LFS object."""

    content: bytes
    lfs_oid: str | None = None

    @property
    def git_oid(self) -> str:
        data = self.pointer if self.lfs_oid else self.content
        return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()

    @property
    def pointer(self) -> bytes:
        return (
            f"version https://git-lfs.github.com/spec/v1\noid sha256:{self.lfs_oid}\nsize {len(self.content)}\n"
        ).encode()

    def entry(self, path: str) -> dict[str, Any]:
        """The tree / paths-info JSON of this file."""
        item: dict[str, Any] = {"type": "file", "path": path, "size": len(self.content), "oid": self.git_oid}
        if self.lfs_oid:
            item["lfs"] = {"oid": self.lfs_oid, "size": len(self.content), "pointerSize": len(self.pointer)}
        return item


@dataclass
class Commit:
    sha: str
    parent: str | None
    files: dict[str, Blob]
    title: str
    created_at: str


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    branches: dict[str, str] = field(default_factory=dict)


@dataclass
class HubState:
    """Everything the server stores, plus knobs tests use to make it fail."""

    repos: dict[tuple[str, str], Repo] = field(default_factory=dict)
    commits: dict[str, Commit] = field(default_factory=dict)
    lfs: dict[str, bytes] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    # (method, regex on the path) -> HTTP status to answer instead of serving the request.
    failures: dict[tuple[str, str], int] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def reset(self) -> None:
        with self.lock:
            self.repos.clear()
            self.commits.clear()
            self.lfs.clear()
            self.requests.clear()
            self.failures.clear()

    def head(self, repo: Repo, revision: str) -> Commit | None:
        revision = unquote(revision)
        sha = repo.branches.get(revision)
        if sha is None and revision in self.commits:
            sha = revision
        return self.commits.get(sha) if sha else None

    def files(self, repo_type: str, repo_id: str, revision: str = "main") -> dict[str, bytes]:
        """A repo's files at a revision, as tests see them (LFS files resolved to their bytes)."""
        repo = self.repos[(repo_type, repo_id)]
        commit = self.head(repo, revision)
        assert commit is not None, f"{repo_id} has no revision {revision}"
        return {path: blob.content for path, blob in commit.files.items()}

    def new_commit(self, parent: Commit | None, files: dict[str, Blob], title: str) -> Commit:
        seed = f"{parent.sha if parent else ''}{title}{uuid.uuid4()}".encode()
        commit = Commit(
            sha=hashlib.sha1(seed).hexdigest(),
            parent=parent.sha if parent else None,
            files=files,
            title=title,
            created_at=time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        )
        self.commits[commit.sha] = commit
        return commit


class HubError(Exception):
    """An HTTP error answer in the Hub's shape (JSON body with ``error`` and an ``X-Error-Code``)."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


_REPO_API = re.compile(r"^/api/(models|datasets|spaces)/(?P<ns>[^/]+)/(?P<name>[^/]+)(?P<rest>/.*)?$")
_RESOLVE = re.compile(r"^/(?:(datasets|spaces)/)?(?P<ns>[^/]+)/(?P<name>[^/]+)/resolve/(?P<rest>.+)$")
_LFS_BATCH = re.compile(r"^/(?:(datasets|spaces)/)?(?P<ns>[^/]+)/(?P<name>[^/]+)\.git/info/lfs/objects/batch$")


def _repo_type(prefix: str | None) -> str:
    return {"datasets": "dataset", "spaces": "space"}.get(prefix or "", "model")


class HubHandler(BaseHTTPRequestHandler):
    """Routes one request to the matching Hub endpoint."""

    protocol_version = "HTTP/1.1"
    server: LoopbackHub

    # -- plumbing -------------------------------------------------------------------------
    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet; requests are recorded in ``HubState.requests`` instead."""

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            data = b"".join(chunks)
        else:
            data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            data = gzip.decompress(data)
        return data

    def _json_body(self) -> Any:
        body = self._body()
        content_type = self.headers.get("Content-Type", "")
        if "application/x-www-form-urlencoded" in content_type:
            return {key: values if key == "paths" else values[0] for key, values in parse_qs(body.decode()).items()}
        return json.loads(body or b"{}")

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None, method: str = "GET") -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if "Content-Length" not in (headers or {}):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if method != "HEAD" and body:
            self.wfile.write(body)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None, method: str = "GET") -> None:
        headers = {"Content-Type": "application/json", **(headers or {})}
        self._send(status, json.dumps(payload).encode(), headers, method)

    def _authorized(self) -> bool:
        return self.headers.get("Authorization", "") == f"Bearer {TEST_TOKEN}"

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        path, query = url.path, parse_qs(url.query)
        state = self.server.state
        with state.lock:
            state.requests.append((method, self.path))
            failure = next(
                (code for (m, rx), code in state.failures.items() if m == method and re.search(rx, path)), None
            )
        try:
            if failure is not None:
                if method in ("POST", "PUT"):
                    self._body()
                raise HubError(failure, f"injected failure for {method} {path}")
            self._route(method, path, query)
        except HubError as error:
            headers = {"X-Error-Message": error.message}
            if error.code:
                headers["X-Error-Code"] = error.code
            self._send_json(error.status, {"error": error.message}, headers, method)

    def _route(self, method: str, path: str, query: dict[str, list[str]]) -> None:
        if path == "/api/whoami-v2" and method == "GET":
            self._require_auth()
            whoami = {"type": "user", "name": TEST_USER, "orgs": [], "auth": {"type": "access_token"}}
            return self._send_json(200, whoami)
        if path == "/api/repos/create" and method == "POST":
            return self._create_repo()
        if path == "/api/validate-yaml" and method == "POST":
            return self._validate_yaml()
        if path.startswith("/lfs-objects/"):
            return self._lfs_object(method, path.removeprefix("/lfs-objects/"))
        if (match := _LFS_BATCH.match(path)) and method == "POST":
            return self._lfs_batch(_repo_type(match.group(1)), f"{match['ns']}/{match['name']}")
        if match := _REPO_API.match(path):
            return self._repo_api(method, _repo_type(match.group(1)), f"{match['ns']}/{match['name']}",
                                  match["rest"] or "", query)
        if (match := _RESOLVE.match(path)) and method in ("GET", "HEAD"):
            return self._resolve(method, _repo_type(match.group(1)), f"{match['ns']}/{match['name']}", match["rest"])
        raise HubError(404, f"no route for {method} {path}")

    # -- repos ----------------------------------------------------------------------------
    def _require_auth(self) -> None:
        if not self._authorized():
            raise HubError(401, "Invalid credentials in Authorization header")

    def _repo(self, repo_type: str, repo_id: str) -> Repo:
        repo = self.server.state.repos.get((repo_type, repo_id))
        if repo is None or (repo.private and not self._authorized()):
            raise HubError(404, f"Repository not found: {repo_id}", "RepoNotFound")
        return repo

    def _commit(self, repo: Repo, revision: str) -> Commit:
        commit = self.server.state.head(repo, revision)
        if commit is None:
            raise HubError(404, f"Invalid rev id: {unquote(revision)}", "RevisionNotFound")
        return commit

    def _create_repo(self) -> None:
        self._require_auth()
        body = self._json_body()
        namespace = body.get("organization") or TEST_USER
        repo_id = f"{namespace}/{body['name']}"
        repo_type = body.get("type") or "model"
        state = self.server.state
        url = f"{self.server.url}/{'' if repo_type == 'model' else repo_type + 's/'}{repo_id}"
        with state.lock:
            if (repo_type, repo_id) in state.repos:
                return self._send_json(409, {"error": "You already created this repo", "url": url},
                                       {"X-Error-Message": "You already created this repo"})
            private = bool(body.get("private")) or body.get("visibility") == "private"
            repo = Repo(repo_type=repo_type, repo_id=repo_id, private=private)
            first = state.new_commit(None, {".gitattributes": Blob(GITATTRIBUTES)}, "initial commit")
            repo.branches["main"] = first.sha
            state.repos[(repo_type, repo_id)] = repo
        self._send_json(200, {"url": url, "name": repo_id, "id": repo_id})

    def _repo_api(self, method: str, repo_type: str, repo_id: str, rest: str, query: dict[str, list[str]]) -> None:
        state = self.server.state
        with state.lock:
            repo = self._repo(repo_type, repo_id)
            if method == "GET" and (rest == "" or rest.startswith("/revision/")):
                return self._repo_info(repo, rest.removeprefix("/revision/") or "main")
            if method == "GET" and rest.startswith("/tree/"):
                return self._tree(repo, rest.removeprefix("/tree/"), query)
            if method == "POST" and rest.startswith("/paths-info/"):
                return self._paths_info(repo, rest.removeprefix("/paths-info/"))
            if method == "POST" and rest.startswith("/preupload/"):
                return self._preupload(repo, rest.removeprefix("/preupload/"))
            if method == "POST" and rest.startswith("/commit/"):
                return self._create_commit(repo, rest.removeprefix("/commit/"))
            if method == "POST" and rest.startswith("/branch/"):
                return self._create_branch(repo, rest.removeprefix("/branch/"))
            if method == "GET" and rest == "/refs":
                branches = [{"name": name, "ref": f"refs/heads/{name}", "targetCommit": sha}
                            for name, sha in repo.branches.items()]
                return self._send_json(200, {"branches": branches, "converts": [], "tags": []})
        raise HubError(404, f"no route for {method} {repo_id}{rest}")

    def _repo_info(self, repo: Repo, revision: str) -> None:
        commit = self._commit(repo, revision)
        card_data = None
        if "README.md" in commit.files:
            card_data = _card_yaml(commit.files["README.md"].content)
        siblings = []
        for path, blob in sorted(commit.files.items()):
            sibling: dict[str, Any] = {"rfilename": path, "size": len(blob.content), "blobId": blob.git_oid}
            if blob.lfs_oid:
                sibling["lfs"] = {"size": len(blob.content), "sha256": blob.lfs_oid, "pointerSize": len(blob.pointer)}
            siblings.append(sibling)
        self._send_json(200, {
            "_id": hashlib.md5(repo.repo_id.encode()).hexdigest()[:24],
            "id": repo.repo_id,
            "author": repo.repo_id.split("/")[0],
            "sha": commit.sha,
            "lastModified": commit.created_at,
            "createdAt": commit.created_at,
            "private": repo.private,
            "gated": False,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": list((card_data or {}).get("tags") or []),
            "cardData": card_data,
            "siblings": siblings,
        })

    def _create_branch(self, repo: Repo, branch: str) -> None:
        self._require_auth()
        branch = unquote(branch)
        body = self._json_body()
        if branch in repo.branches:
            raise HubError(409, f"Reference already exists: refs/heads/{branch}")
        start = self._commit(repo, body.get("startingPoint") or "main")
        repo.branches[branch] = start.sha
        self._send_json(200, {})

    # -- listings -------------------------------------------------------------------------
    def _tree(self, repo: Repo, rest: str, query: dict[str, list[str]]) -> None:
        revision, _, folder = rest.partition("/")
        commit = self._commit(repo, revision)
        folder = unquote(folder).strip("/")
        recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
        prefix = f"{folder}/" if folder else ""
        if folder and folder in commit.files:
            raise HubError(404, f"{folder} is a file, not a folder", "EntryNotFound")
        entries: dict[str, dict[str, Any]] = {}
        for path, blob in sorted(commit.files.items()):
            if not path.startswith(prefix):
                continue
            parts = path[len(prefix):].split("/")
            for depth in range(1, len(parts)):
                sub = prefix + "/".join(parts[:depth])
                if recursive or depth == 1:
                    entries.setdefault(sub, {"type": "directory", "path": sub, "size": 0,
                                             "oid": hashlib.sha1(sub.encode()).hexdigest()})
            if recursive or len(parts) == 1:
                entries[path] = blob.entry(path)
        if folder and not entries:
            raise HubError(404, f"Entry not found: {folder}", "EntryNotFound")
        self._send_json(200, list(entries.values()))

    def _paths_info(self, repo: Repo, revision: str) -> None:
        commit = self._commit(repo, revision)
        body = self._json_body()
        paths = body.get("paths") or []
        if isinstance(paths, str):
            paths = [paths]
        found = []
        for wanted in paths:
            wanted = wanted.strip("/")
            if wanted in commit.files:
                found.append(commit.files[wanted].entry(wanted))
            elif any(path.startswith(wanted + "/") for path in commit.files):
                found.append({"type": "directory", "path": wanted, "size": 0,
                              "oid": hashlib.sha1(wanted.encode()).hexdigest()})
        self._send_json(200, found)

    # -- uploads --------------------------------------------------------------------------
    def _preupload(self, repo: Repo, revision: str) -> None:
        self._require_auth()
        body = self._json_body()
        commit = self.server.state.head(repo, revision)
        answers = []
        for item in body.get("files", []):
            path = item["path"]
            lfs = path.endswith(LFS_SUFFIXES) or int(item.get("size", 0)) > 10_000_000
            existing = commit.files.get(path) if commit else None
            answers.append({
                "path": path,
                "uploadMode": "lfs" if lfs else "regular",
                "shouldIgnore": False,
                "oid": existing.git_oid if existing else None,
            })
        self._send_json(200, {"files": answers, "commitOid": commit.sha if commit else None})

    def _lfs_batch(self, repo_type: str, repo_id: str) -> None:
        self._require_auth()
        state = self.server.state
        with state.lock:
            self._repo(repo_type, repo_id)
            body = self._json_body()
            objects = []
            for obj in body.get("objects", []):
                oid, size = obj["oid"], obj["size"]
                answer: dict[str, Any] = {"oid": oid, "size": size, "authenticated": True}
                if oid not in state.lfs:
                    answer["actions"] = {
                        "upload": {"href": f"{self.server.url}/lfs-objects/{oid}", "header": {}},
                        "verify": {"href": f"{self.server.url}/lfs-objects/{oid}/verify", "header": {}},
                    }
                objects.append(answer)
        self._send_json(200, {"transfer": "basic", "objects": objects},
                        {"Content-Type": "application/vnd.git-lfs+json"})

    def _lfs_object(self, method: str, rest: str) -> None:
        oid, _, action = rest.partition("/")
        state = self.server.state
        if method == "PUT" and not action:
            data = self._body()
            if hashlib.sha256(data).hexdigest() != oid:
                raise HubError(400, f"uploaded bytes do not match oid {oid}")
            with state.lock:
                state.lfs[oid] = data
            return self._send(200)
        if method == "POST" and action == "verify":
            body = self._json_body()
            with state.lock:
                stored = state.lfs.get(oid)
            if stored is None or len(stored) != int(body.get("size", -1)):
                raise HubError(404, f"LFS object {oid} was not uploaded")
            return self._send_json(200, {})
        raise HubError(404, f"no route for {method} /lfs-objects/{rest}")

    def _create_commit(self, repo: Repo, revision: str) -> None:
        self._require_auth()
        revision = unquote(revision)
        state = self.server.state
        lines = [json.loads(line) for line in self._body().decode().splitlines() if line.strip()]
        parent = self._commit(repo, revision)
        files = dict(parent.files)
        title = "commit"
        for line in lines:
            key, value = line["key"], line["value"]
            if key == "header":
                title = value.get("summary") or title
                wanted_parent = value.get("parentCommit")
                if wanted_parent and wanted_parent != parent.sha:
                    raise HubError(412, f"parent commit {wanted_parent} is not the head of {revision}")
            elif key == "file":
                content = base64.b64decode(value["content"]) if value.get("encoding") == "base64" else value[
                    "content"].encode()
                if value["path"] == "README.md":
                    _check_card(content)
                files[value["path"]] = Blob(content)
            elif key == "lfsFile":
                data = state.lfs.get(value["oid"])
                if data is None:
                    raise HubError(422, f"LFS object {value['oid']} for {value['path']} was never uploaded")
                files[value["path"]] = Blob(data, lfs_oid=value["oid"])
            elif key == "deletedFile":
                if files.pop(value["path"], None) is None:
                    raise HubError(404, f"cannot delete {value['path']}: no such file", "EntryNotFound")
            elif key == "deletedFolder":
                prefix = value["path"].rstrip("/") + "/"
                for path in [path for path in files if path.startswith(prefix)]:
                    del files[path]
            else:
                raise HubError(400, f"unknown commit operation {key!r}")
        commit = state.new_commit(parent, files, title)
        repo.branches[revision] = commit.sha
        prefix = "" if repo.repo_type == "model" else f"{repo.repo_type}s/"
        self._send_json(200, {
            "success": True,
            "commitOid": commit.sha,
            "commitUrl": f"{self.server.url}/{prefix}{repo.repo_id}/commit/{commit.sha}",
            "pullRequestUrl": None,
        })

    def _validate_yaml(self) -> None:
        body = self._json_body()
        try:
            _card_yaml((body.get("content") or "").encode())
        except yaml.YAMLError as error:
            return self._send_json(400, {"errors": [{"message": str(error)}], "warnings": []})
        self._send_json(200, {"errors": [], "warnings": []})

    # -- downloads ------------------------------------------------------------------------
    def _resolve(self, method: str, repo_type: str, repo_id: str, rest: str) -> None:
        state = self.server.state
        with state.lock:
            repo = self._repo(repo_type, repo_id)
            revision, _, path = rest.partition("/")
            commit = self._commit(repo, revision)
            path = unquote(path)
            blob = commit.files.get(path)
            if blob is None:
                raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        data = blob.content
        headers = {
            "X-Repo-Commit": commit.sha,
            "ETag": f'"{blob.git_oid}"',
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        if blob.lfs_oid:
            headers["X-Linked-Etag"] = f'"{blob.lfs_oid}"'
            headers["X-Linked-Size"] = str(len(data))
        status = 200
        if match := re.match(r"bytes=(\d*)-(\d*)$", self.headers.get("Range", "")):
            start_text, end_text = match.groups()
            if start_text:
                start = int(start_text)
                end = min(int(end_text), len(data) - 1) if end_text else len(data) - 1
            else:
                start, end = max(len(data) - int(end_text), 0), len(data) - 1
            if start >= len(data):
                self._send(416, b"", {"Content-Range": f"bytes */{len(data)}"}, method)
                return
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            data = data[start:end + 1]
            status = 206
        headers["Content-Length"] = str(len(data))
        self._send(status, data, headers, method)


def _card_yaml(readme: bytes) -> dict[str, Any] | None:
    text = readme.decode("utf-8", errors="replace")
    match = re.match(r"^---\n(.*?)\n---\n", text, re.DOTALL)
    if not match:
        return None
    loaded = yaml.safe_load(match.group(1))
    return loaded if isinstance(loaded, dict) else None


def _check_card(readme: bytes) -> None:
    """Reject a README whose YAML header does not parse, as the Hub does."""
    try:
        _card_yaml(readme)
    except yaml.YAMLError as error:
        raise HubError(400, f"Invalid metadata in README.md: {error}") from error


class LoopbackHub(ThreadingHTTPServer):
    """The server object: bound at construction, serving once ``start()`` runs its thread."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), HubHandler)
        self.state = HubState()
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self.serve_forever, name="loopback-hub", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self.shutdown()
            self._thread.join(timeout=10)
            self._thread = None


# Bound now, before huggingface_hub or datasets is imported, so the endpoint is known to them.
HUB = LoopbackHub()
HF_HOME = tempfile.mkdtemp(prefix="prefbuild-test-hf-home-")
os.environ["HF_ENDPOINT"] = HUB.url
os.environ["HF_TOKEN"] = TEST_TOKEN
os.environ["HF_HOME"] = HF_HOME
os.environ["HF_HUB_DISABLE_XET"] = "1"


def _import_hub_client_online() -> None:
    """Import ``huggingface_hub`` now, so its constants are fixed before any test module changes the environment.

    Test modules that load local models set ``HF_HUB_OFFLINE=1`` at import time; read by
    ``huggingface_hub`` at its import, that would block every request to the loopback Hub. With
    ``HF_ENDPOINT`` on loopback nothing can reach the real Hub anyway, so the client is imported
    online and the variables are put back for subprocesses (a vLLM server keeps its offline mode).
    """
    saved = {name: os.environ.pop(name) for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE") if name in os.environ}
    try:
        import huggingface_hub.constants  # noqa: F401
    finally:
        os.environ.update(saved)


_import_hub_client_online()
os.environ.pop("HF_DATASETS_CACHE", None)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Close the socket and remove the throw-away HF_HOME at the end of the session."""
    HUB.stop()
    HUB.server_close()
    shutil.rmtree(HF_HOME, ignore_errors=True)


@pytest.fixture(scope="session")
def hub_server() -> Iterator[LoopbackHub]:
    """The loopback Hub, serving for the whole session; ``hub_server.state`` holds repos and knobs."""
    import huggingface_hub.constants

    if HUB.url != huggingface_hub.constants.ENDPOINT:
        pytest.fail(
            f"huggingface_hub was imported before the loopback Hub set HF_ENDPOINT "
            f"(endpoint is {huggingface_hub.constants.ENDPOINT}, expected {HUB.url})"
        )
    HUB.start()
    yield HUB


@pytest.fixture
def fresh_hub(hub_server: LoopbackHub) -> Iterator[LoopbackHub]:
    """The loopback Hub with no repos and no injected failures, for one test."""
    hub_server.state.reset()
    yield hub_server
    hub_server.state.failures.clear()
