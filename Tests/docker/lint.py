#!/usr/bin/env python3
"""Static checks for the container packaging in docker/ (there is no Docker engine in CI).

Every YAML file under docker/ is parsed (duplicate keys are errors) and validated against the hand-written schemas
in Tests/docker/schemas/, then checked for the rules the proxy's safety model depends on: loopback or client key,
Host allowlist, probes that can pass the Host check, non-root and read-only containers, a state directory the proxy
can own, placeholder-only Secrets. The Dockerfile gets a small rule checker (and hadolint too when it is on PATH),
which also reads Package.swift: its build stage must COPY every target's directory (`path:`, or the default
Sources/<name>, Tests/<name>) before `swift build`, since SwiftPM stops at the first one missing, and strip the
binary's debug info only; dockerignore.example must leave all of them in the build context.
The routes.json files (docker/routes*.json and those inside ConfigMaps) may only use keys documented in
docs/configuration.md, and must pass docs/routes.schema.json when the repository has it.

Prints one line per file checked and closes with "N passed, M failed". Exit status 0 when all pass, 1 otherwise,
2 when a Python module is missing. Needs python3 with PyYAML and jsonschema only.

`lint.py --stage-build-context DIR` instead copies what the Dockerfile's build stage COPYs into DIR, laid out as in
the image (docker/check-image.sh builds the binary there).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

try:
    import jsonschema
    import yaml
except ImportError as missing:  # pragma: no cover - depends on the machine
    print(f"lint: Python module '{missing.name}' is missing: python3 -m pip install pyyaml jsonschema")
    sys.exit(2)
try:  # jsonschema >= 4.18 resolves "$ref"s through `referencing`; older releases (Debian's) through RefResolver
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012
except ImportError:  # pragma: no cover - depends on the machine
    Registry = None

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
SCHEMAS = Path(__file__).resolve().parent / "schemas"
CONFIG_DOC = ROOT / "docs" / "configuration.md"
ROUTES_SCHEMA = ROOT / "docs" / "routes.schema.json"  # the project's own schema of routes.json, when present

PROXY_IMAGE_NAME = "bearer-proxy"
PROXY_UID = 10001
STATE_SUFFIX = "/bearer-proxy"  # the proxy appends this to $XDG_STATE_HOME
DEFAULT_CONFIG_PATH = "/etc/bearer-proxy/routes.json"
DEFAULT_LISTEN = "127.0.0.1:8080"  # routes.json's default (docs/configuration.md)
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1"}
KEY_HEADERS = ("x-bearer-proxy-key", "proxy-authorization")
SECRET_NAME = re.compile(r"(?i)(secret|passw|token|credential|api_?key|private_?key|_key$|^key$)")
# A variable that names a file holds a path, not the secret in it (AZURE_FEDERATED_TOKEN_FILE, the *_FILE convention).
FILE_NAME = re.compile(r"(?i)_FILE$")
ALLOWED_EGRESS = {("UDP", 53), ("TCP", 53), ("TCP", 443)}


def rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


@dataclass
class Result:
    path: Path
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def fail(self, message: str) -> None:
        self.problems.append(message)


# ----------------------------------------------------------------------------------------------------------------
# YAML and JSON loading
# ----------------------------------------------------------------------------------------------------------------


class StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys (PyYAML and kubectl silently keep the last one)."""


def _construct_mapping(loader: StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    mapping = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in mapping:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml_documents(path: Path, result: Result) -> list:
    try:
        with path.open(encoding="utf-8") as handle:
            documents = [doc for doc in yaml.load_all(handle, Loader=StrictLoader) if doc is not None]
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        result.fail(f"not valid YAML: {error}".replace("\n", " "))
        return []
    if "\t" in path.read_text(encoding="utf-8"):
        result.fail("contains a tab character")
    if not documents:
        result.fail("no YAML document")
    return documents


def strict_json(text: str) -> object:
    def pairs(items: list) -> dict:
        seen = {}
        for key, value in items:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}")
            seen[key] = value
        return seen

    return json.loads(text, object_pairs_hook=pairs)


# ----------------------------------------------------------------------------------------------------------------
# Schemas
# ----------------------------------------------------------------------------------------------------------------

SCHEMA_FOR_KIND = {
    "Deployment": "k8s-deployment.json",
    "ConfigMap": "k8s-configmap.json",
    "Secret": "k8s-secret.json",
    "Service": "k8s-service.json",
    "NetworkPolicy": "k8s-networkpolicy.json",
    "ServiceAccount": "k8s-serviceaccount.json",
}


class Schemas:
    def __init__(self) -> None:
        self.documents: dict[str, dict] = {}
        self.errors: dict[Path, list[str]] = {}
        for path in sorted(SCHEMAS.glob("*.json")):
            problems = []
            try:
                document = strict_json(path.read_text(encoding="utf-8"))
                jsonschema.Draft202012Validator.check_schema(document)
                if document.get("$id") != path.name:
                    problems.append(f'"$id" must be "{path.name}"')
                self.documents[path.name] = document
            except (ValueError, jsonschema.SchemaError) as error:
                problems.append(f"not a valid JSON Schema (2020-12): {error}".split("\n")[0])
            self.errors[path] = problems
        self.registry = Registry().with_resources(
            (name, Resource.from_contents(document, default_specification=DRAFT202012))
            for name, document in self.documents.items()) if Registry is not None else None

    def validate(self, name: str, instance: object, where: str, result: Result) -> None:
        schema = self.documents.get(name)
        if schema is None:
            result.fail(f"{where}: schema {name} is missing or invalid")
            return
        if self.registry is not None:
            validator = jsonschema.Draft202012Validator(schema, registry=self.registry)
        else:
            resolver = jsonschema.RefResolver(base_uri=name, referrer=schema, store=dict(self.documents))
            validator = jsonschema.Draft202012Validator(schema, resolver=resolver)
        for error in sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path)):
            location = "/".join(str(part) for part in error.absolute_path) or "(document)"
            result.fail(f"{where}: {location}: {schema_message(error)}")


def schema_message(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        patterns = [re.compile(p) for p in error.schema.get("patternProperties", {})]
        extra = [k for k in error.instance if k not in allowed and not any(p.search(k) for p in patterns)]
        if extra:
            return f"unknown key(s) {', '.join(sorted(map(str, extra)))}"
    if error.validator in ("oneOf", "anyOf") and error.context:
        best = jsonschema.exceptions.best_match(error.context)
        return f"{error.message.split(' is not valid')[0]} is not valid: {best.message}"
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    return error.message + (f" ({description})" if description else "")


# ----------------------------------------------------------------------------------------------------------------
# docs/configuration.md and routes.json
# ----------------------------------------------------------------------------------------------------------------


def documented_keys() -> set[str]:
    """Every key name docs/configuration.md mentions: `backticked` names and "keys": in its JSON examples."""
    text = CONFIG_DOC.read_text(encoding="utf-8")
    keys = set(re.findall(r"`([A-Za-z][A-Za-z0-9]*)`", text))
    keys |= set(re.findall(r'"([A-Za-z][A-Za-z0-9]*)"\s*:', text))
    return keys


# Objects whose keys are data, not configuration keys: header names to set, extra request parameters.
FREE_FORM = {("headers", "set"), ("account", "extraParameters")}


def undocumented(value: object, documented: set[str], path: str = "", parent: str = "") -> list[str]:
    """The JSON paths of keys in `value` that docs/configuration.md never names."""
    found = []
    if isinstance(value, dict):
        for key, child in value.items():
            child_path = f"{path}.{key}" if path else key
            if key not in documented:
                found.append(child_path)
            if (parent, key) not in FREE_FORM:
                found += undocumented(child, documented, child_path, key)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += undocumented(child, documented, f"{path}[{index}]", parent)
    return found


_routes_validator: list = []


def routes_validator() -> "jsonschema.protocols.Validator | None":
    """A validator for docs/routes.schema.json, or None when the repository has no such schema."""
    if not _routes_validator:
        validator = None
        if ROUTES_SCHEMA.is_file():
            schema = json.loads(ROUTES_SCHEMA.read_text(encoding="utf-8"))
            jsonschema.Draft202012Validator.check_schema(schema)
            validator = jsonschema.Draft202012Validator(schema)
        _routes_validator.append(validator)
    return _routes_validator[0]


@dataclass
class Routes:
    listen: str
    allowed_hosts: list[str]
    allow_remote: bool
    require_key: bool
    env_names: list[str]


def check_routes(text: str, where: str, documented: set[str], result: Result) -> Routes | None:
    try:
        config = strict_json(text)
    except ValueError as error:
        result.fail(f"{where}: not strict JSON: {error}")
        return None
    if not isinstance(config, dict):
        result.fail(f"{where}: must be a JSON object")
        return None
    for path in undocumented(config, documented):
        result.fail(f"{where}: key {path} is not documented in docs/configuration.md")
    validator = routes_validator()
    if validator is not None:
        for error in sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path)):
            location = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
            result.fail(f"{where}: {location or '$'}: {error.message} (docs/routes.schema.json)")
    account = config.get("account")
    if not isinstance(account, dict) or not isinstance(account.get("flow"), str):
        result.fail(f"{where}: account.flow is required")
        account = {}
    routes = config.get("routes")
    if not isinstance(routes, list) or not routes:
        result.fail(f"{where}: routes must be a non-empty array")
    else:
        for index, route in enumerate(routes):
            if not isinstance(route, dict) or "prefix" not in route or "upstream" not in route:
                result.fail(f"{where}: routes[{index}] needs prefix and upstream")
    for key, value in account.items():
        if SECRET_NAME.search(key) and not key.endswith("Env"):
            result.fail(f"{where}: account.{key}: secrets never live in routes.json; use a *Env key")
        if key.endswith("Env") and not (isinstance(value, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value)):
            result.fail(f"{where}: account.{key} must name an environment variable")
    hosts = config.get("allowedHosts", [])
    return Routes(
        listen=str(config.get("listen", DEFAULT_LISTEN)),
        allowed_hosts=[h.lower() for h in hosts if isinstance(h, str)],
        allow_remote=config.get("allowRemote") is True,
        require_key=config.get("requireKey") is True,
        env_names=[v for k, v in account.items() if k.endswith("Env") and isinstance(v, str)],
    )


def listen_host_port(listen: str) -> tuple[str, int | None]:
    match = re.fullmatch(r"(\[[^\]]+\]|[^:]+):(\d+)", listen)
    if not match:
        return listen, None
    return match.group(1).lower(), int(match.group(2))


def is_loopback(listen: str) -> bool:
    host, _ = listen_host_port(listen)
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def listen_from_args(args: list[str] | None, default: str) -> str:
    if not args:
        return default
    for index, arg in enumerate(args):
        if arg == "--listen" and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith("--listen="):
            return arg.split("=", 1)[1]
    return default


# ----------------------------------------------------------------------------------------------------------------
# Package.swift: where its targets live (what the image's build stage must copy)
# ----------------------------------------------------------------------------------------------------------------

PACKAGE_MANIFEST = ROOT / "Package.swift"
# Target declarations and the directory SwiftPM looks in when a target has no `path:` (its predefined directories,
# first existing one wins; `Sources/` when none exists).
TARGET_DEFAULT_DIRS = {
    "target": ("Sources", "Source", "src", "srcs"),
    "executableTarget": ("Sources", "Source", "src", "srcs"),
    "macro": ("Sources", "Source", "src", "srcs"),
    "systemLibrary": ("Sources", "Source", "src", "srcs"),
    "testTarget": ("Tests",),
    "plugin": ("Plugins",),
    "binaryTarget": (),  # path: or url: only
}


@dataclass
class PackageTarget:
    kind: str
    name: str
    path: str  # relative to the package root, POSIX, no trailing slash
    explicit: bool  # from `path:`, not SwiftPM's default location
    line: int


_SWIFT_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*)
  | (?P<block>/\*)
  | (?P<string>(?P<hashes>\#*)(?P<quote>\"\"\"|\"))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>.)
""", re.VERBOSE | re.DOTALL)


def swift_tokens(text: str) -> list[tuple[str, str, int]]:
    """(kind, value, line) for each identifier ("ident"), string literal ("string", its text with escapes undone;
    "dynamic-string" when it interpolates) and punctuation character ("punct") of a Swift source. Comments,
    nested block comments included, and whitespace are dropped; raw (#"..."#) and multi-line strings are read."""
    tokens: list[tuple[str, str, int]] = []
    index, line = 0, 1
    while index < len(text):
        match = _SWIFT_TOKEN.match(text, index)
        assert match is not None  # (?P<punct>.) matches any character
        kind = "string" if match.group("string") is not None else str(match.lastgroup)
        start_line = line
        cursor = match.end()
        if kind == "block":
            depth = 1
            while depth and cursor < len(text):
                step = text[cursor:cursor + 2]
                depth += 1 if step == "/*" else -1 if step == "*/" else 0
                cursor += 2 if step in ("/*", "*/") else 1
        elif kind == "string":
            hashes, quote = match.group("hashes"), match.group("quote")
            escape, closing, value = "\\" + hashes, quote + hashes, []
            while cursor < len(text) and not text.startswith(closing, cursor):
                if text.startswith(escape, cursor):
                    escaped = text[cursor + len(escape):cursor + len(escape) + 1]
                    kind = "dynamic-string" if escaped == "(" else kind
                    value.append({"n": "\n", "t": "\t", "0": "\0"}.get(escaped, escaped))
                    cursor += len(escape) + 1
                else:
                    value.append(text[cursor])
                    cursor += 1
            cursor += len(closing)
            literal = "".join(value)
            tokens.append((kind, literal.strip("\n") if len(quote) == 3 else literal, start_line))
        elif kind in ("ident", "punct"):
            tokens.append((kind, match.group(), start_line))
        line += text.count("\n", index, cursor)
        index = cursor
    return tokens


def package_targets(manifest: Path, problems: list[str]) -> list[PackageTarget]:
    """The targets Package.swift declares, each with the directory SwiftPM reads it from.

    A target declaration is `.target(`, `.executableTarget(`, `.testTarget(`, `.macro(`, `.systemLibrary(`,
    `.binaryTarget(` or `.plugin(` with a `capability:` (a plugin product has none) that is not nested in another
    declaration (`.target(name:)` is also how a dependency on a target is spelled). `name:` and `path:` are read at
    the declaration's own level, never from the `.product(name:...)`s inside it; a `path:` that is not a plain
    string literal is reported, not guessed."""
    tokens = swift_tokens(manifest.read_text(encoding="utf-8"))
    targets: list[PackageTarget] = []
    index = 0
    while index < len(tokens) - 2:
        kind, value, line = tokens[index + 1]
        if not (tokens[index][:2] == ("punct", ".") and kind == "ident" and value in TARGET_DEFAULT_DIRS
                and tokens[index + 2][:2] == ("punct", "(")):
            index += 1
            continue
        depth, cursor, labels = 0, index + 2, {}
        while cursor < len(tokens):
            token = tokens[cursor]
            if token[0] == "punct" and token[1] in "([{":
                depth += 1
            elif token[0] == "punct" and token[1] in ")]}":
                depth -= 1
                if depth == 0:
                    break
            elif (depth == 1 and token[0] == "ident" and cursor + 1 < len(tokens)
                  and tokens[cursor + 1][:2] == ("punct", ":") and token[1] not in labels):
                labels[token[1]] = tokens[cursor + 2] if cursor + 2 < len(tokens) else ("", "", token[2])
            cursor += 1
        index = cursor + 1  # declarations inside this one are dependencies, not targets
        if value == "plugin" and "capability" not in labels:
            continue  # a plugin product
        name_token = labels.get("name")
        if name_token is None or name_token[0] != "string":
            problems.append(f"Package.swift:{line}: .{value}( without a literal name: cannot tell where it lives")
            continue
        name = name_token[1]
        path_token = labels.get("path")
        if path_token is not None:
            if path_token[0] != "string":
                problems.append(f"Package.swift:{line}: target {name}: path: is not a string literal; "
                                "write it as one so that the build stage's COPYs can be checked")
                continue
            path = str(PurePosixPath(path_token[1].strip("/") or "."))
            targets.append(PackageTarget(value, name, path, True, line))
        elif value == "binaryTarget":
            continue  # url: — downloaded, nothing to copy
        else:
            candidates = TARGET_DEFAULT_DIRS[value]
            base = next((d for d in candidates if (manifest.parent / d).is_dir()), candidates[0])
            targets.append(PackageTarget(value, name, f"{base}/{name}", False, line))
    return targets


def package_paths(manifest: Path, problems: list[str]) -> list[tuple[str, str]]:
    """(path, why) for everything `swift build` needs from the build context: the manifest and each target."""
    paths = [("Package.swift", "the manifest")]
    for target in package_targets(manifest, problems):
        where = f"path: at Package.swift:{target.line}" if target.explicit else "its default location"
        paths.append((target.path, f"target {target.name}, {where}"))
    return paths


def dockerignore_regex(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern (Go filepath.Match plus `**`) as a regex over a cleaned, relative path."""
    pattern = str(PurePosixPath("/" + pattern.strip())).lstrip("/") or "."
    out, index = [], 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**", index):
            index += 2
            if pattern.startswith("/", index):
                out.append("(?:.*/)?")
                index += 1
            else:
                out.append(".*")
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", index + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1:end]
                out.append("[" + ("^" + body[1:] if body.startswith("^") else body) + "]")
                index = end
        elif char == "\\" and index + 1 < len(pattern):
            index += 1
            out.append(re.escape(pattern[index]))
        else:
            out.append(re.escape(char))
        index += 1
    return re.compile("".join(out) + r"\Z")


def dockerignore_excludes(patterns: list[str], path: str) -> str | None:
    """The pattern that leaves `path` out of the build context, or None when it is sent. As Docker decides: the last
    pattern matching the path or one of its parent directories wins, and `!pattern` takes it back in."""
    parts = PurePosixPath(path).parts
    candidates = ["/".join(parts[:count]) for count in range(1, len(parts) + 1)]
    verdict = None
    for pattern in patterns:
        negated = pattern.startswith("!")
        regex = dockerignore_regex(pattern[1:] if negated else pattern)
        if any(regex.match(candidate) for candidate in candidates):
            verdict = None if negated else pattern
    return verdict


# ----------------------------------------------------------------------------------------------------------------
# Dockerfile
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class Instruction:
    line: int
    keyword: str
    args: str


@dataclass
class Stage:
    image: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)


def parse_dockerfile(text: str) -> list[Instruction]:
    instructions: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and pending):
            continue  # comments (also inside continuations) and blank continuation lines
        if not stripped:
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].strip())
            continue
        pending.append(stripped)
        joined = " ".join(part for part in pending if part)
        pending = []
        keyword, _, args = joined.partition(" ")
        instructions.append(Instruction(start, keyword.upper(), args.strip()))
    if pending:
        instructions.append(Instruction(start, "<UNTERMINATED>", " ".join(pending)))
    return instructions


def exec_form(args: str) -> list[str] | None:
    try:
        value = json.loads(args)
    except ValueError:
        return None
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return None


def env_pairs(args: str) -> list[tuple[str, str]]:
    words = shlex.split(args, posix=True)
    if words and "=" not in words[0]:  # legacy `ENV NAME value with spaces`
        return [(words[0], " ".join(words[1:]))]
    return [tuple(word.split("=", 1)) if "=" in word else (word, "") for word in words]  # type: ignore[misc]


@dataclass
class ImageFacts:
    """What the runtime image sets, for the compose and Kubernetes checks."""

    env: dict[str, str] = field(default_factory=dict)
    cmd: list[str] | None = None
    volumes: list[str] = field(default_factory=list)


def check_dockerfile(path: Path, result: Result) -> ImageFacts:
    facts = ImageFacts()
    text = path.read_text(encoding="utf-8")
    instructions = parse_dockerfile(text)
    stages: list[Stage] = []
    for instruction in instructions:
        if instruction.keyword == "<UNTERMINATED>":
            result.fail(f"line {instruction.line}: the file ends inside a line continuation")
            continue
        if instruction.keyword == "FROM":
            words = [w for w in instruction.args.split() if not w.startswith("--")]
            image = words[0] if words else ""
            name = words[2] if len(words) >= 3 and words[1].lower() == "as" else None
            known = {s.name for s in stages if s.name}
            if image not in known and image != "scratch":
                tagless = image.rsplit("/", 1)[-1]
                if "@sha256:" not in image and (":" not in tagless or tagless.endswith(":latest")):
                    result.fail(f"line {instruction.line}: FROM {image}: pin a tag (not latest) or a digest")
            stages.append(Stage(image, name))
        elif not stages:
            if instruction.keyword != "ARG":
                result.fail(f"line {instruction.line}: {instruction.keyword} before the first FROM")
        else:
            stages[-1].instructions.append(instruction)
    if len(stages) < 2:
        result.fail("must be multi-stage: build with the Swift image, run on a slim image")
    if not stages:
        return facts
    final = stages[-1]
    names = [s.name for s in stages]

    for stage_index, stage in enumerate(stages):
        is_final = stage is final
        for instruction in stage.instructions:
            where = f"line {instruction.line}"
            keyword, args = instruction.keyword, instruction.args
            if keyword == "ADD":
                if re.search(r"(?i)\b(https?|ftp)://|git@|\.git\b", args):
                    result.fail(f"{where}: ADD of a URL; download in a RUN with checksum verification instead")
            if keyword in ("ENV", "ARG"):
                pairs = env_pairs(args) if keyword == "ENV" else [tuple((args.split("=", 1) + [""])[:2])]
                for name, value in pairs:
                    if SECRET_NAME.search(name) and (keyword == "ARG" or value):
                        result.fail(f"{where}: {keyword} {name}: secrets must not be baked into the image")
                    if is_final and keyword == "ENV":
                        facts.env[name] = value
            if keyword == "RUN":
                if "apt-get install" in args or "apt install" in args:
                    for needed, why in (
                        ("apt-get update", "apt-get update in the same RUN (a cached update layer goes stale)"),
                        ("--no-install-recommends", "--no-install-recommends"),
                        ("rm -rf /var/lib/apt/lists/*", "rm -rf /var/lib/apt/lists/* (apt lists cleaned)"),
                    ):
                        if needed not in args:
                            result.fail(f"{where}: apt-get install without {why}")
                    if not re.search(r"apt-get install[^&|;]*(\s-y\b|\s--yes\b|\s-[a-z]*y)", args):
                        result.fail(f"{where}: apt-get install needs -y (no prompt in a build)")
                    if is_final and re.search(r"\s[a-z0-9.+-]+-dev\b", args.split("apt-get install", 1)[1]):
                        result.fail(f"{where}: -dev packages do not belong in the runtime stage")
                elif "apt-get update" in args:
                    result.fail(f"{where}: apt-get update without install in the same RUN")
            if keyword == "COPY":
                match = re.search(r"--from=(\S+)", args)
                if match:
                    source = match.group(1)
                    earlier = names[:stage_index]
                    if source not in earlier and not (source.isdigit() and int(source) < stage_index):
                        if ":" not in source:
                            result.fail(f"{where}: COPY --from={source} names no earlier stage")
            if keyword in ("CMD", "ENTRYPOINT") and exec_form(args) is None:
                result.fail(f"{where}: {keyword} must use the JSON (exec) form so signals reach the proxy")

    # The runtime stage.
    users = [i for i in final.instructions if i.keyword == "USER"]
    if not users:
        result.fail("final stage: no USER (it would run as root)")
    else:
        user = users[-1].args.split(":")[0].strip()
        if user in ("root", "0", ""):
            result.fail(f"line {users[-1].line}: final USER is root")
        elif not user.isdigit():
            result.fail(f"line {users[-1].line}: USER {user}: use the numeric uid so Kubernetes' runAsNonRoot can verify it")
        elif int(user) != PROXY_UID:
            result.fail(f"line {users[-1].line}: USER {user}: the examples and docs use uid {PROXY_UID}")
    healthchecks = [i for i in final.instructions if i.keyword == "HEALTHCHECK"]
    if not healthchecks or healthchecks[-1].args.upper().startswith("NONE"):
        result.fail("final stage: no HEALTHCHECK")
    else:
        check = healthchecks[-1].args
        command = check.split("CMD", 1)[1].strip() if "CMD" in check else ""
        if exec_form(command) is None:
            result.fail(f"line {healthchecks[-1].line}: HEALTHCHECK CMD must use the JSON form")
        if not re.search(r"http://(127\.0\.0\.1|localhost|\[::1\]):\d+/-/health\b", check):
            result.fail(f"line {healthchecks[-1].line}: HEALTHCHECK must call /-/health on 127.0.0.1 "
                        "(the Host check accepts loopback names; /-/health needs no key)")
    for keyword in ("CMD", "ENTRYPOINT"):
        found = [i for i in final.instructions if i.keyword == keyword]
        if found:
            value = exec_form(found[-1].args)
            if keyword == "CMD":
                facts.cmd = value
            if keyword == "ENTRYPOINT" and value != ["bearer-proxy"]:
                result.fail(f"line {found[-1].line}: ENTRYPOINT should be [\"bearer-proxy\"]")
    for instruction in final.instructions:
        if instruction.keyword == "VOLUME":
            value = exec_form(instruction.args)
            facts.volumes += value if value is not None else instruction.args.split()
    if not any(i.keyword == "EXPOSE" and "8080" in i.args.split() for i in final.instructions):
        result.fail("final stage: EXPOSE 8080 missing")
    if facts.env.get("BEARER_PROXY_CONFIG") != DEFAULT_CONFIG_PATH:
        result.fail(f"final stage: ENV BEARER_PROXY_CONFIG={DEFAULT_CONFIG_PATH} missing")
    xdg = facts.env.get("XDG_STATE_HOME")
    if not xdg:
        result.fail("final stage: ENV XDG_STATE_HOME missing (the proxy would use $HOME/.local/state)")
    else:
        state = xdg.rstrip("/") + STATE_SUFFIX
        if state not in facts.volumes:
            result.fail(f"final stage: the state directory {state} ($XDG_STATE_HOME{STATE_SUFFIX}) is not a VOLUME")
        volume_line = next((i.line for i in final.instructions if i.keyword == "VOLUME"), 10**9)
        prepared = [i for i in final.instructions if i.keyword == "RUN" and i.line < volume_line
                    and re.search(rf"{re.escape(state)}(\s|$)", i.args)]
        if not any(str(PROXY_UID) in i.args and "0700" in i.args for i in prepared):
            result.fail(f"final stage: {state} must be created owned by {PROXY_UID} with mode 0700 before VOLUME")

    # The build stage: dependencies resolved before the sources are copied (layer caching), static stdlib.
    build_runs = " ".join(i.args for s in stages[:-1] for i in s.instructions if i.keyword == "RUN")
    if "--static-swift-stdlib" not in build_runs:
        result.fail("build stage: swift build without --static-swift-stdlib (the runtime image has no Swift runtime)")
    check_release_build_flags(build_runs, result)
    resolve = [i.line for s in stages[:-1] for i in s.instructions
               if i.keyword == "RUN" and "swift package resolve" in i.args]
    copy_sources = [i.line for s in stages[:-1] for i in s.instructions
                    if i.keyword == "COPY" and re.match(r"(\S+\s+)*Sources/?\s", i.args + " ")]
    if not resolve or (copy_sources and min(copy_sources) < min(resolve)):
        result.fail("build stage: run `swift package resolve` after copying Package.* and before copying Sources/")

    check_build_context(stages, result)

    hadolint = shutil.which("hadolint")
    if hadolint:
        version = subprocess.run([hadolint, "--version"], capture_output=True, text=True).stdout.strip()
        run = subprocess.run([hadolint, "--no-color", str(path)], capture_output=True, text=True)
        if run.returncode != 0:
            for line in (run.stdout + run.stderr).strip().splitlines():
                result.fail(f"hadolint: {line.replace(str(path), rel(path))}")
        label = f"hadolint {version.split()[-1]}" if version else "hadolint"
        result.notes.append(f"{label}: clean" if run.returncode == 0 else f"{label}: problems")
    else:
        result.notes.append("hadolint not installed; own rules only")
    return facts


def copy_operands(args: str) -> tuple[list[str], str] | None:
    """The sources and destination of a COPY from the build context (None for COPY --from)."""
    words = exec_form(args)
    if words is None:
        words = shlex.split(args, posix=True)
    if any(w.startswith("--from=") for w in words):
        return None
    words = [w for w in words if not w.startswith("--")]
    if len(words) < 2:
        return None
    return words[:-1], words[-1]


@dataclass
class ContextCopy:
    line: int
    source: str  # relative to the build context, cleaned; "." for all of it; may be a glob
    destination: PurePosixPath  # absolute, WORKDIR applied
    into_directory: bool  # the destination is a directory (ends with "/", or several sources)

    def lands_at(self, path: str) -> PurePosixPath | None:
        """Where this COPY puts `path` of the context, if it copies it: a directory's contents go into the
        destination; a file goes into it when it is a directory and becomes it otherwise."""
        if self.source == ".":
            return self.destination / path
        regex = dockerignore_regex(self.source)
        parts = PurePosixPath(path).parts
        for count in range(1, len(parts) + 1):
            prefix = "/".join(parts[:count])
            if regex.match(prefix):
                if (ROOT / prefix).is_dir():
                    return self.destination.joinpath(*parts[count:])
                return self.destination / parts[-1] if self.into_directory else self.destination
        return None


@dataclass
class BuildStage:
    """What the stage that runs `swift build` gets from the build context."""

    lineage: list[Stage]  # the build stage and the stages it starts FROM, outermost first
    copies: list[ContextCopy]
    swift_build_line: int
    root: PurePosixPath | None  # where Package.swift lands: the package root inside the image


def build_stage(stages: list[Stage]) -> BuildStage | None:
    by_name = {s.name: s for s in stages if s.name}
    build = next((s for s in stages[:-1] if any(i.keyword == "RUN" and "swift build" in i.args
                                                 for i in s.instructions)), None)
    if build is None:
        return None
    lineage = [build]
    while lineage[0].image in by_name and by_name[lineage[0].image] not in lineage:
        lineage.insert(0, by_name[lineage[0].image])
    workdir = PurePosixPath("/")  # WORKDIR carries over from a parent stage
    copies: list[ContextCopy] = []
    swift_build_line = None
    for stage in lineage:
        for instruction in stage.instructions:
            if instruction.keyword == "WORKDIR":
                workdir = workdir / instruction.args.strip()
            elif instruction.keyword == "COPY":
                operands = copy_operands(instruction.args)
                if operands is None:
                    continue
                sources, destination = operands
                into = destination.endswith("/") or destination in (".", "..") or len(sources) > 1
                for source in sources:
                    copies.append(ContextCopy(instruction.line, str(PurePosixPath("/" + source)).lstrip("/") or ".",
                                              workdir / destination, into))
            elif instruction.keyword == "RUN" and "swift build" in instruction.args and stage is build:
                swift_build_line = swift_build_line or instruction.line
    landed = [where for copy in copies if (where := copy.lands_at("Package.swift")) is not None]
    return BuildStage(lineage, copies, swift_build_line or 10**9, landed[0].parent if landed else None)


def build_flags(words: list[str]) -> list[str]:
    """The options among `words` that decide how the binary is built: paths that differ by where the build runs
    (--package-path, --scratch-path, and their values) are left out, as is anything after the command."""
    flags: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in ("--package-path", "--scratch-path"):
            skip = True
        elif word.startswith("-") or (flags and flags[-1] in ("-Xswiftc", "-Xlinker")):
            flags.append(word)
        else:
            break
    return flags


def shipped_build_flags(build_runs: str) -> list[str] | None:
    """The options of the build stage's `swift build -c release --product bearer-proxy` (up to its `&&`)."""
    match = re.search(r"swift build -c release --product bearer-proxy\s([^&]*)", build_runs)
    return build_flags(match.group(1).replace("\\", " ").split()) if match else None


# Where the other two builds of the shipped binary keep their flags: docker/check-image.sh's `build=( … )` array and
# bench/run.sh's RELEASE_FLAGS.
OTHER_RELEASE_BUILDS = {
    "docker/check-image.sh": re.compile(r"^build=\(swift build -c release --product bearer-proxy\s(.*?)\)", re.M | re.S),
    "bench/run.sh": re.compile(r"^RELEASE_FLAGS=\((.*?)\)", re.M | re.S),
}


def check_release_build_flags(build_runs: str, result: Result) -> None:
    """docker/check-image.sh and bench/run.sh build the binary exactly as the build stage does: the image check
    tests, and the benchmark measures, what ships (#24 session 19: the link flags alone moved idle RSS by a MiB)."""
    shipped = shipped_build_flags(build_runs)
    if shipped is None:
        result.fail("build stage: no `swift build -c release --product bearer-proxy`")
        return
    for name, pattern in OTHER_RELEASE_BUILDS.items():
        path = ROOT / name
        match = pattern.search(path.read_text(encoding="utf-8")) if path.exists() else None
        flags = build_flags(match.group(1).replace('"', " ").split()) if match else None
        if flags != shipped:
            result.fail(f"{name} builds bearer-proxy with {flags} where docker/Dockerfile's build stage uses {shipped}")


def check_build_context(stages: list[Stage], result: Result) -> None:
    """Every file `swift build` needs reaches the build stage: Package.swift and every target's directory (its
    `path:` or SwiftPM's default Sources/<name>, Tests/<name>), copied to the same place relative to Package.swift
    before the first `swift build`. SwiftPM loads the whole package graph even for one product, so a missing
    directory of a target nothing in the product uses still stops the build ("invalid custom path")."""
    if not PACKAGE_MANIFEST.is_file():
        result.fail("Package.swift not found: cannot check the build stage's COPYs")
        return
    problems: list[str] = []
    needed = package_paths(PACKAGE_MANIFEST, problems)
    for problem in problems:
        result.fail(problem)
    build = build_stage(stages)
    if build is None:
        result.fail("build stage: no stage runs `swift build`")
        return
    if build.root is None:
        result.fail("build stage: Package.swift is never copied (COPY Package.* ./)")
        return
    for path, why in needed:
        lines = [copy.line for copy in build.copies if copy.lands_at(path) == build.root / path]
        if not lines:
            hint = "COPY Package.* ./" if path == "Package.swift" else f"COPY {path}/ {path}/"
            result.fail(f"build stage: {path} ({why}) is not copied to {build.root / path}: swift build loads every "
                        f"target and fails without it (\"invalid custom path\"); add `{hint}` or copy a directory "
                        "that holds it")
        elif min(lines) > build.swift_build_line:
            result.fail(f"build stage: {path} ({why}) is copied only after `swift build` "
                        f"(line {build.swift_build_line})")

    # Debug info is half the binary: the build stage strips it, keeping the symbol table for backtraces.
    runs = " ".join(i.args for s in build.lineage for i in s.instructions if i.keyword == "RUN")
    strips = re.findall(r"\bstrip\b((?:\s+-[-\w]+)*)", runs)
    if not any(re.search(r"(--strip-debug|\s-[gSd]\b)", options) for options in strips):
        result.fail("build stage: strip --strip-debug the binary (debug info is over half of it; the symbol table "
                    "stays for backtraces)")
    if any(re.search(r"(--strip-all|--strip-unneeded|\s-s\b)", options) for options in strips):
        result.fail("build stage: strip --strip-debug only: --strip-all/-s removes the symbols backtraces need")


def stage_build_context(dockerfile: Path, target: Path) -> int:
    """Copies into `target` what the Dockerfile's build stage COPYs from the build context, laid out as under its
    package root (where Package.swift lands), leaving out what the context's .dockerignore does (the repository's
    .dockerignore, else docker/dockerignore.example, which the docs say to copy there). File times are kept, so
    an incremental `swift build` of the copy stays incremental. For docker/check-image.sh, which builds the binary
    from exactly these files. Returns the number of files copied; raises SystemExit when the stage cannot be read."""
    stages: list[Stage] = []
    for instruction in parse_dockerfile(dockerfile.read_text(encoding="utf-8")):
        if instruction.keyword == "FROM":
            words = [w for w in instruction.args.split() if not w.startswith("--")]
            stages.append(Stage(words[0], words[2] if len(words) >= 3 and words[1].lower() == "as" else None))
        elif stages:
            stages[-1].instructions.append(instruction)
    build = build_stage(stages)
    if build is None or build.root is None:
        raise SystemExit(f"lint: {rel(dockerfile)}: no build stage that copies Package.swift and runs swift build")
    ignore_file = ROOT / ".dockerignore" if (ROOT / ".dockerignore").is_file() else DOCKER / "dockerignore.example"
    patterns = [line.strip() for line in ignore_file.read_text(encoding="utf-8").splitlines()
                if line.strip() and not line.strip().startswith("#")]
    if target.exists():
        shutil.rmtree(target)
    copied = 0
    for copy in build.copies:
        if copy.line > build.swift_build_line:
            continue
        matches = [ROOT] if copy.source == "." else sorted(
            p for p in ROOT.glob(copy.source) if dockerignore_excludes(patterns, rel(p)) is None)
        if not matches:
            raise SystemExit(f"lint: {rel(dockerfile)}:{copy.line}: COPY {copy.source}: no such file in the context")
        for match in matches:
            files = [match] if match.is_file() else sorted(f for f in match.rglob("*") if f.is_file())
            for file in files:
                relative = rel(file)
                if dockerignore_excludes(patterns, relative) is not None:
                    continue
                landed = copy.lands_at(relative)
                if landed is None or build.root not in landed.parents:
                    continue
                destination = target / landed.relative_to(build.root)
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(file, destination)
                copied += 1
    return copied


def check_dockerignore(path: Path, result: Result) -> None:
    patterns = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip() and not line.strip().startswith("#")]
    for needed in (".build", ".build-*", "bench/results"):
        if needed not in patterns:
            result.fail(f"should ignore {needed}")
    problems: list[str] = []
    needed = package_paths(PACKAGE_MANIFEST, problems) if PACKAGE_MANIFEST.is_file() else []
    needed.append(("Package.resolved", "the pinned dependency versions, when there is one"))
    for kept, why in needed:
        pattern = dockerignore_excludes(patterns, kept)
        if pattern is not None:
            result.fail(f"must not ignore {kept} ({why}): \"{pattern}\" leaves it out of the build context")


# ----------------------------------------------------------------------------------------------------------------
# Compose
# ----------------------------------------------------------------------------------------------------------------


def is_proxy_image(image: str) -> bool:
    name = image.split("@")[0].rsplit("/", 1)[-1].split(":")[0]
    return name == PROXY_IMAGE_NAME


def compose_environment(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        return dict((item.split("=", 1) + [""])[:2] for item in env)
    return {k: "" if v is None else str(v) for k, v in env.items()}


def check_compose(path: Path, document: dict, facts: ImageFacts, documented: set[str], result: Result) -> None:
    services: dict = document.get("services") or {}
    top_volumes = document.get("volumes") or {}
    top_networks = document.get("networks") or {}
    proxies = [name for name, svc in services.items()
               if (isinstance(svc.get("build"), dict) and str(svc["build"].get("dockerfile", "")).endswith("docker/Dockerfile"))
               or is_proxy_image(str(svc.get("image", "")))]
    if not proxies:
        result.fail("no bearer-proxy service (built from docker/Dockerfile)")
    for name, service in services.items():
        env = compose_environment(service)
        for key, value in env.items():
            if SECRET_NAME.search(key) and value and not re.fullmatch(r"\$\{[A-Za-z_][A-Za-z0-9_]*(:?[?-][^}]*)?\}", value):
                result.fail(f"services.{name}.environment.{key}: a literal secret; use ${{{key}:?...}} from the shell or .env")
        for net in service.get("networks") or []:
            if net not in top_networks:
                result.fail(f"services.{name}.networks: {net} is not declared under networks")
        for dependency in (service.get("depends_on") or {}):
            if dependency not in services:
                result.fail(f"services.{name}.depends_on: no service {dependency}")
        if service.get("network_mode") == "host":
            result.fail(f"services.{name}: network_mode host exposes a loopback listener to the host")

    for name in proxies:
        service = services[name]
        where = f"services.{name}"
        env = compose_environment(service)
        build = service.get("build")
        if isinstance(build, dict):
            context = (path.parent / str(build.get("context", "."))).resolve()
            dockerfile = context / str(build.get("dockerfile", "Dockerfile"))
            if context != ROOT:
                result.fail(f"{where}.build.context must be the repository root (it is {rel(context)})")
            if not dockerfile.is_file():
                result.fail(f"{where}.build.dockerfile: {rel(dockerfile)} does not exist")
        if service.get("read_only") is not True:
            result.fail(f"{where}: read_only: true (the proxy writes only to its state volume)")
        if "ALL" not in (service.get("cap_drop") or []):
            result.fail(f"{where}: cap_drop: [ALL]")
        if not any(str(opt).startswith("no-new-privileges") for opt in service.get("security_opt") or []):
            result.fail(f"{where}: security_opt: [\"no-new-privileges:true\"]")
        if service.get("user") not in (None, str(PROXY_UID), f"{PROXY_UID}:{PROXY_UID}"):
            result.fail(f"{where}.user: the image runs as {PROXY_UID}; another uid cannot use the state volume")
        for port in service.get("ports") or []:
            if not re.match(r"^(127\.0\.0\.1|\[::1\]):", str(port)):
                result.fail(f"{where}.ports: {port} publishes the proxy beyond the host's loopback")

        mounts = {}
        for volume in service.get("volumes") or []:
            if isinstance(volume, str):
                parts = volume.split(":")
                mounts[parts[1]] = (parts[0], parts[2].split(",") if len(parts) > 2 else [])
            else:
                mounts[volume["target"]] = (volume.get("source", ""), ["ro"] if volume.get("read_only") else [])
        config_path = env.get("BEARER_PROXY_CONFIG") or facts.env.get("BEARER_PROXY_CONFIG", DEFAULT_CONFIG_PATH)
        routes = None
        if config_path not in mounts:
            result.fail(f"{where}.volumes: nothing mounted at {config_path}")
        else:
            source, options = mounts[config_path]
            if "ro" not in options:
                result.fail(f"{where}.volumes: {config_path} must be mounted read-only (:ro)")
            routes_file = (path.parent / source).resolve()
            if not routes_file.is_file():
                result.fail(f"{where}.volumes: {source} does not exist")
            else:
                # Its own problems are reported on its own line; here only what the compose checks need.
                routes = check_routes(routes_file.read_text(encoding="utf-8"), rel(routes_file), documented,
                                      Result(routes_file))
        state = (env.get("XDG_STATE_HOME") or facts.env.get("XDG_STATE_HOME", "")).rstrip("/") + STATE_SUFFIX
        if state not in mounts:
            result.fail(f"{where}.volumes: no volume at the state directory {state}")
        else:
            source, _ = mounts[state]
            if source.startswith((".", "/", "~")):
                result.fail(f"{where}.volumes: {state} is a bind mount; use a named volume (it inherits uid "
                            f"{PROXY_UID} and 0700 from the image)")
            elif source not in top_volumes:
                result.fail(f"{where}.volumes: volume {source} is not declared under volumes")
        if routes is None:
            continue
        command = service.get("command")
        args = shlex.split(command) if isinstance(command, str) else command
        listen = listen_from_args(args if args is not None else facts.cmd, routes.listen)
        if not is_loopback(listen):
            if "BEARER_PROXY_KEY" not in env and not routes.allow_remote:
                result.fail(f"{where}: listens on {listen} without BEARER_PROXY_KEY or allowRemote: it would refuse to start")
            if name.lower() not in routes.allowed_hosts:
                result.fail(f"{where}: callers send Host: {name}:...; add \"{name}\" to allowedHosts")
        for variable in routes.env_names:
            if variable not in env:
                result.fail(f"{where}.environment: {variable} (named in routes.json) is not set")
        # Every other service that talks to the proxy shares an internal network with it.
        proxy_networks = set(service.get("networks") or [])
        for other, other_service in services.items():
            if other == name:
                continue
            text = json.dumps(other_service)
            if f"://{name}:" in text or f"://{name}/" in text:
                shared = proxy_networks & set(other_service.get("networks") or [])
                if not shared:
                    result.fail(f"services.{other} calls {name} but shares no network with it")
                elif not any((top_networks.get(n) or {}).get("internal") is True for n in shared):
                    result.fail(f"services.{other}: the network shared with {name} should be internal: true")
                if routes.require_key or not is_loopback(listen):
                    if not re.search(r"(?i)x-bearer-proxy-key|proxy-authorization", text):
                        result.fail(f"services.{other} calls {name} without sending the client key")


# ----------------------------------------------------------------------------------------------------------------
# Kubernetes
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class K8sObject:
    path: Path
    doc: dict

    @property
    def kind(self) -> str:
        return str(self.doc.get("kind"))

    @property
    def name(self) -> str:
        return str((self.doc.get("metadata") or {}).get("name"))


def matches(selector: dict, labels: dict) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def covering_mount(path: str, mounts: list[dict]) -> dict | None:
    best = None
    for mount in mounts:
        mount_path = mount.get("mountPath", "").rstrip("/") or "/"
        if PurePosixPath(path) == PurePosixPath(mount_path) or PurePosixPath(mount_path) in PurePosixPath(path).parents:
            if best is None or len(mount_path) > len(best.get("mountPath", "")):
                best = mount
    return best


def probe_urls(probe: dict) -> list[str]:
    command = " ".join((probe.get("exec") or {}).get("command") or [])
    return re.findall(r"https?://\S+?(?=[\s'\"]|$)", command)


def check_kubernetes(objects: list[K8sObject], results: dict[Path, Result], facts: ImageFacts,
                     documented: set[str]) -> None:
    by_kind: dict[str, dict[str, K8sObject]] = {}
    for obj in objects:
        by_kind.setdefault(obj.kind, {})[obj.name] = obj
    configmaps = by_kind.get("ConfigMap", {})
    secrets = by_kind.get("Secret", {})
    deployments = by_kind.get("Deployment", {})
    services = by_kind.get("Service", {})
    policies = by_kind.get("NetworkPolicy", {})
    checked_configmaps: set[str] = set()

    for obj in secrets.values():
        if not obj.path.name.endswith(".example.yaml"):
            results[obj.path].fail(f"Secret {obj.name}: real Secrets never live in the repository; "
                                   "keep placeholders in a *.example.yaml file")

    for deployment in deployments.values():
        result = results[deployment.path]
        spec = deployment.doc.get("spec") or {}
        template = spec.get("template") or {}
        labels = (template.get("metadata") or {}).get("labels") or {}
        pod = template.get("spec") or {}
        where = f"Deployment {deployment.name}"
        if not matches((spec.get("selector") or {}).get("matchLabels") or {}, labels):
            result.fail(f"{where}: selector.matchLabels must match the template's labels")
        pod_security = pod.get("securityContext") or {}
        volumes = {v.get("name"): v for v in pod.get("volumes") or []}
        containers = [(c, True) for c in pod.get("initContainers") or []] + [(c, False) for c in pod.get("containers") or []]
        used_volumes = set()
        has_proxy = False
        for container, is_init in containers:
            cname = f"{where}, container {container.get('name')}"
            security = container.get("securityContext") or {}

            def effective(key: str) -> object:
                return security.get(key, pod_security.get(key))

            if effective("runAsNonRoot") is not True:
                result.fail(f"{cname}: runAsNonRoot: true")
            if effective("runAsUser") == 0:
                result.fail(f"{cname}: runAsUser 0 is root")
            if security.get("readOnlyRootFilesystem") is not True:
                result.fail(f"{cname}: readOnlyRootFilesystem: true")
            if security.get("allowPrivilegeEscalation") is not False:
                result.fail(f"{cname}: allowPrivilegeEscalation: false")
            if "ALL" not in ((security.get("capabilities") or {}).get("drop") or []):
                result.fail(f"{cname}: capabilities.drop: [ALL]")
            if not ((container.get("resources") or {}).get("limits") or {}).get("memory"):
                result.fail(f"{cname}: resources.limits.memory")
            if is_init and container.get("restartPolicy") != "Always":
                result.fail(f"{cname}: an init container here must be a native sidecar (restartPolicy: Always)")
            env = {e.get("name"): e for e in container.get("env") or []}
            for name, entry in env.items():
                if SECRET_NAME.search(str(name)) and not FILE_NAME.search(str(name)) and "value" in entry:
                    result.fail(f"{cname}: env {name} holds a literal value; take it from a Secret (secretKeyRef)")
                reference = (entry.get("valueFrom") or {}).get("secretKeyRef")
                if reference:
                    secret = secrets.get(reference.get("name"))
                    if secret is None:
                        result.fail(f"{cname}: env {name}: no Secret {reference.get('name')} in docker/kubernetes")
                    elif reference.get("key") not in (secret.doc.get("stringData") or {}):
                        result.fail(f"{cname}: env {name}: Secret {secret.name} has no key {reference.get('key')}")
            mounts = container.get("volumeMounts") or []
            for mount in mounts:
                used_volumes.add(mount.get("name"))
                if mount.get("name") not in volumes:
                    result.fail(f"{cname}: volumeMount {mount.get('name')} names no volume")

            if not is_proxy_image(str(container.get("image", ""))):
                continue
            has_proxy = True
            if effective("runAsUser") != PROXY_UID:
                result.fail(f"{cname}: runAsUser {PROXY_UID} (the image's user, owner of its state)")
            # routes.json from a ConfigMap, mounted read-only as a directory.
            config_path = (env.get("BEARER_PROXY_CONFIG") or {}).get("value") or facts.env.get(
                "BEARER_PROXY_CONFIG", DEFAULT_CONFIG_PATH)
            mount = covering_mount(config_path, mounts)
            routes = None
            if mount is None:
                result.fail(f"{cname}: nothing mounted at {config_path}")
            else:
                if mount.get("readOnly") is not True:
                    result.fail(f"{cname}: mount {mount.get('mountPath')} readOnly: true")
                if mount.get("subPath"):
                    result.fail(f"{cname}: mount {mount.get('mountPath')} uses subPath, which never sees ConfigMap updates")
                volume = volumes.get(mount.get("name")) or {}
                source = volume.get("configMap")
                if not source:
                    result.fail(f"{cname}: {config_path} should come from a ConfigMap")
                else:
                    relative = str(PurePosixPath(config_path).relative_to(mount.get("mountPath")))
                    items = source.get("items")
                    key = next((i["key"] for i in items if i.get("path") == relative), None) if items else relative
                    configmap = configmaps.get(source.get("name"))
                    if configmap is None:
                        result.fail(f"{cname}: no ConfigMap {source.get('name')} in docker/kubernetes")
                    elif key is None or key not in (configmap.doc.get("data") or {}):
                        result.fail(f"{cname}: ConfigMap {configmap.name} has no {relative}")
                    else:
                        checked_configmaps.add(configmap.name)
                        routes = check_routes(configmap.doc["data"][key], f"ConfigMap {configmap.name} {key}",
                                              documented, results[configmap.path])
            # State: $XDG_STATE_HOME/bearer-proxy must be creatable and chmod-able by the proxy.
            xdg = ((env.get("XDG_STATE_HOME") or {}).get("value") or facts.env.get("XDG_STATE_HOME", "")).rstrip("/")
            state = xdg + STATE_SUFFIX
            state_mount = covering_mount(state, mounts)
            if state_mount is None or state_mount.get("readOnly"):
                result.fail(f"{cname}: no writable volume holds the state directory {state} "
                            "(the root filesystem is read-only)")
            else:
                volume = volumes.get(state_mount.get("name")) or {}
                if "emptyDir" in volume and state_mount.get("mountPath", "").rstrip("/") == state:
                    result.fail(f"{cname}: the emptyDir is mounted at the state directory {state} itself: its root "
                                "is owned by root, so the proxy cannot chmod it 0700; set XDG_STATE_HOME to the "
                                "mount so the proxy creates bearer-proxy/ inside it")
            if routes is None:
                continue
            listen = listen_from_args(container.get("args") if "args" in container else facts.cmd, routes.listen)
            _, port = listen_host_port(listen)
            loopback = is_loopback(listen)
            key_required = routes.require_key or not loopback
            if loopback:
                if any(p.get("containerPort") == port for p in container.get("ports") or []):
                    result.fail(f"{cname}: declares port {port}, but the proxy listens on loopback only")
                if routes.require_key and "BEARER_PROXY_KEY" not in env:
                    result.fail(f"{cname}: requireKey without BEARER_PROXY_KEY")
            else:
                if "BEARER_PROXY_KEY" not in env and not routes.allow_remote:
                    result.fail(f"{cname}: listens on {listen} without BEARER_PROXY_KEY or allowRemote: "
                                "it would refuse to start")
                exposing = [s for s in services.values()
                            if matches((s.doc.get("spec") or {}).get("selector") or {}, labels)]
                for service in exposing:
                    if service.name not in routes.allowed_hosts:
                        result.fail(f"{cname}: Service {service.name} reaches it, but \"{service.name}\" is not "
                                    "in allowedHosts (callers' Host header would get 403)")
            for variable in routes.env_names:
                if variable not in env:
                    result.fail(f"{cname}: env {variable} (named in routes.json) is not set")
            for probe_name, path in (("livenessProbe", "/-/health"), ("readinessProbe", "/-/ready")):
                probe = container.get(probe_name)
                if not probe:
                    result.fail(f"{cname}: {probe_name} on {path} is required")
                    continue
                if "httpGet" in probe:
                    http = probe["httpGet"]
                    hosts = {h.get("value", "").lower().split(":")[0] for h in http.get("httpHeaders") or []
                             if h.get("name", "").lower() == "host"}
                    if loopback:
                        result.fail(f"{cname}: {probe_name}: the kubelet connects to the Pod IP, which a loopback "
                                    "listener never sees; use an exec probe with curl to 127.0.0.1")
                    elif not hosts or not hosts <= (LOOPBACK_HOSTS | set(routes.allowed_hosts)):
                        result.fail(f"{cname}: {probe_name}: httpGet sends Host: <pod IP>, which the Host check "
                                    "refuses; add httpHeaders Host: localhost or use an exec probe")
                    if http.get("path") != path:
                        result.fail(f"{cname}: {probe_name} should check {path}")
                    if key_required and http.get("path") != "/-/health":
                        result.fail(f"{cname}: {probe_name}: {http.get('path')} needs the client key, which an "
                                    "httpGet probe cannot send without writing it into the manifest")
                elif "exec" in probe:
                    urls = probe_urls(probe)
                    command = " ".join(probe["exec"].get("command") or [])
                    if not urls:
                        result.fail(f"{cname}: {probe_name}: the exec probe calls no URL")
                    for url in urls:
                        match = re.fullmatch(r"https?://(\[[^\]]+\]|[^/:]+):(\d+)(/\S*)", url)
                        if not match or match.group(1).lower() not in LOOPBACK_HOSTS:
                            result.fail(f"{cname}: {probe_name}: {url}: call the proxy on 127.0.0.1")
                            continue
                        if port is not None and int(match.group(2)) != port:
                            result.fail(f"{cname}: {probe_name}: {url}: the proxy listens on port {port}")
                        if match.group(3) != path:
                            result.fail(f"{cname}: {probe_name} should check {path}, not {match.group(3)}")
                        if key_required and match.group(3) != "/-/health" and not any(
                                h in command.lower() for h in KEY_HEADERS):
                            result.fail(f"{cname}: {probe_name}: {match.group(3)} needs the client key here")
                else:
                    result.fail(f"{cname}: {probe_name}: use an exec probe (curl) against {path}")
        for name in volumes:
            if name not in used_volumes:
                result.fail(f"{where}: volume {name} is never mounted")
        if has_proxy and not any(matches(((p.doc.get("spec") or {}).get("podSelector") or {}).get("matchLabels") or {},
                                         labels) for p in policies.values()):
            result.fail(f"{where}: no NetworkPolicy in docker/kubernetes selects its Pods")

    for configmap in configmaps.values():
        data = configmap.doc.get("data") or {}
        if "routes.json" in data and configmap.name not in checked_configmaps:
            check_routes(data["routes.json"], f"ConfigMap {configmap.name} routes.json", documented,
                         results[configmap.path])

    for service in services.values():
        result = results[service.path]
        spec = service.doc.get("spec") or {}
        targets = [d for d in deployments.values()
                   if matches(spec.get("selector") or {},
                              ((d.doc["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {})]
        if not targets:
            result.fail(f"Service {service.name}: its selector matches no Deployment here")
        for port in spec.get("ports") or []:
            target = port.get("targetPort", port.get("port"))
            declared = [p for d in targets for c in d.doc["spec"]["template"]["spec"].get("containers", [])
                        for p in c.get("ports") or []]
            if not any(p.get("name") == target or p.get("containerPort") == target for p in declared):
                result.fail(f"Service {service.name}: targetPort {target} is no declared container port")

    for policy in policies.values():
        result = results[policy.path]
        spec = policy.doc.get("spec") or {}
        selector = (spec.get("podSelector") or {}).get("matchLabels") or {}
        if not any(matches(selector, ((d.doc["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {})
                   for d in deployments.values()):
            result.fail(f"NetworkPolicy {policy.name}: its podSelector matches no Deployment here")
        for index, rule in enumerate(spec.get("egress") or []):
            for port in rule.get("ports") or []:
                pair = (port.get("protocol", "TCP"), port.get("port"))
                if pair not in ALLOWED_EGRESS:
                    result.fail(f"NetworkPolicy {policy.name}: egress[{index}] allows {pair[0]}/{pair[1]}; "
                                "only DNS (53) and HTTPS (443)")
                if pair[1] == 53 and not rule.get("to"):
                    result.fail(f"NetworkPolicy {policy.name}: egress[{index}]: restrict DNS to the cluster's DNS pods")


# ----------------------------------------------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------------------------------------------


def main() -> int:
    if sys.argv[1:2] == ["--stage-build-context"] and len(sys.argv) == 3:
        count = stage_build_context(DOCKER / "Dockerfile", Path(sys.argv[2]))
        print(f"staged {count} files of the build stage's context in {sys.argv[2]}")
        return 0
    if sys.argv[1:]:
        print("usage: lint.py [--stage-build-context DIR]", file=sys.stderr)
        return 2
    results: dict[Path, Result] = {}

    def result_for(path: Path) -> Result:
        return results.setdefault(path, Result(path))

    if not DOCKER.is_dir():
        print(f"lint: {rel(DOCKER)} does not exist")
        return 1
    documented = documented_keys()
    schemas = Schemas()

    dockerfile = DOCKER / "Dockerfile"
    facts = ImageFacts()
    if dockerfile.is_file():
        facts = check_dockerfile(dockerfile, result_for(dockerfile))
    else:
        result_for(dockerfile).fail("missing")

    ignore = DOCKER / "dockerignore.example"
    if ignore.is_file():
        check_dockerignore(ignore, result_for(ignore))

    for path in sorted(DOCKER.rglob("*.json")):
        if path.name.startswith("routes"):
            check_routes(path.read_text(encoding="utf-8"), rel(path), documented, result_for(path))
        else:
            try:
                strict_json(path.read_text(encoding="utf-8"))
                result_for(path)
            except ValueError as error:
                result_for(path).fail(f"not strict JSON: {error}")

    k8s_objects: list[K8sObject] = []
    yaml_files = sorted(p for p in DOCKER.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    if not yaml_files:
        result_for(DOCKER / "compose.yaml").fail("no YAML files under docker/")
    for path in yaml_files:
        result = result_for(path)
        for index, document in enumerate(load_yaml_documents(path, result)):
            where = f"document {index + 1}"
            if not isinstance(document, dict):
                result.fail(f"{where}: not a mapping")
            elif "services" in document:
                schemas.validate("compose.json", document, where, result)
                if not result.problems:
                    check_compose(path, document, facts, documented, result)
            elif document.get("kind") in SCHEMA_FOR_KIND:
                schemas.validate(SCHEMA_FOR_KIND[document["kind"]], document, f"{document['kind']} "
                                 f"{(document.get('metadata') or {}).get('name')}", result)
                k8s_objects.append(K8sObject(path, document))
            else:
                result.fail(f"{where}: kind {document.get('kind')!r} has no schema in {rel(SCHEMAS)}")
    schema_clean = all(not results[o.path].problems for o in k8s_objects)
    if k8s_objects and schema_clean:
        check_kubernetes(k8s_objects, results, facts, documented)
    elif k8s_objects:
        for obj in k8s_objects:
            if not results[obj.path].problems:
                results[obj.path].notes.append("cross-file checks skipped until the schema errors are fixed")

    for path, problems in schemas.errors.items():
        result_for(path).problems += problems

    passed = failed = 0
    for path in sorted(results, key=lambda p: (SCHEMAS in p.parents, rel(p))):
        result = results[path]
        note = f" ({'; '.join(result.notes)})" if result.notes else ""
        if result.problems:
            failed += 1
            print(f"FAIL  {rel(path)}{note}")
            for problem in result.problems:
                print(f"      - {problem}")
        else:
            passed += 1
            print(f"ok    {rel(path)}{note}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
