"""deploy/: the Dockerfile, compose.yaml, the Kubernetes manifests and the env examples,
validated offline (no docker, no cluster, no network).

Kubernetes objects: kubernetes-validate's bundled OpenAPI schemas, strict (unknown fields are
errors). KEDA's ScaledObject, a CRD it has no schema for: deploy/k8s/schemas/. compose.yaml:
the compose-spec schema vendored by check-jsonschema.
"""

from __future__ import annotations

import copy
import json
import re
import shlex
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from memq.workers.settings import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
K8S = DEPLOY / "k8s"
# the oldest minor version still common on managed clusters, and the newest bundled one
K8S_VERSIONS = ("1.32", "1.37")
SUBCOMMANDS = {"worker", "beat", "serve", "chroma-index"}
QUEUES = {"memq.extract", "memq.store"}
DEPLOYMENTS = {"memq-extract-worker", "memq-store-worker", "memq-beat", "memq-api"}
# read from the environment outside Settings (logging)
EXTRA_ENV = {"MEMQ_LOG_FORMAT", "MEMQ_LOG_LEVEL"}

Doc = dict[str, Any]


# --- helpers -----------------------------------------------------------------------------------

def load_all(path: Path) -> list[Doc]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]


def k8s_docs() -> list[tuple[str, Doc]]:
    return [(f"{p.relative_to(K8S)}:{d['kind']}/{d['metadata']['name']}", d)
            for p in sorted(K8S.rglob("*.yaml")) for d in load_all(p)]


def k8s_by_kind(kind: str) -> dict[str, Doc]:
    return {d["metadata"]["name"]: d for _, d in k8s_docs() if d["kind"] == kind}


def keda_validator() -> jsonschema.protocols.Validator:
    schema = json.loads((K8S / "schemas" / "keda-scaledobject.json").read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate_k8s(doc: Doc, version: str) -> None:
    if doc["apiVersion"].startswith("keda.sh/"):
        keda_validator().validate(doc)
    else:
        kubernetes_validate.validate(doc, version, strict=True)


def containers(doc: Doc) -> list[Doc]:
    return list(doc["spec"]["template"]["spec"]["containers"])


def queue_of(command: list[str]) -> str | None:
    return command[command.index("-Q") + 1] if "-Q" in command else None


def compose() -> Doc:
    doc = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def compose_validator() -> jsonschema.protocols.Validator:
    ref = files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json")
    schema = json.loads(ref.read_text(encoding="utf-8"))
    return jsonschema.validators.validator_for(schema)(schema)


def read_env(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition("=")
        assert sep and re.fullmatch(r"[A-Z][A-Z0-9_]*", key), f"{path.name}:{n}: {line!r}"
        out[key] = value
    return out


def known_env() -> set[str]:
    return {f"MEMQ_{name.upper()}" for name in Settings.model_fields} | EXTRA_ENV


def instructions(dockerfile: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile: comments dropped, continuations joined."""
    lines = [ln for ln in dockerfile.splitlines() if not ln.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    out = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def dockerfile_problems(dockerfile: str) -> list[str]:
    ins = instructions(dockerfile)
    if not ins or ins[0][0] != "FROM":
        return ["the first instruction is not FROM"]
    final = ins[max(i for i, (word, _) in enumerate(ins) if word == "FROM"):]
    last = {word: args for word, args in final}  # the final stage's last of each instruction
    problems = []
    if not final[0][1].startswith("python:3.11-slim"):
        problems.append(f"final stage is FROM {final[0][1]}")
    if last.get("USER", "root").split(":")[0] in ("root", "0"):
        problems.append("the final stage runs as root")
    if last.get("ENTRYPOINT") != '["memq"]':
        problems.append(f"ENTRYPOINT is {last.get('ENTRYPOINT')}")
    cmd = json.loads(last.get("CMD", "[]"))
    if not cmd or cmd[0] not in SUBCOMMANDS:
        problems.append(f"CMD {cmd} is not a memq subcommand")
    health = last.get("HEALTHCHECK", "")
    if "/healthz" not in health or "curl" in health:
        problems.append(f"HEALTHCHECK {health!r} does not GET /healthz with python")
    return problems


# --- Kubernetes --------------------------------------------------------------------------------

@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize(("where", "doc"), k8s_docs(), ids=[w for w, _ in k8s_docs()])
def test_every_k8s_document_validates(where: str, doc: Doc, version: str) -> None:
    validate_k8s(doc, version)


@pytest.mark.parametrize("break_it", [
    lambda d: d["spec"].update(replicas="1"),
    lambda d: d["spec"]["template"]["spec"]["containers"][0].update(comand=["memq"]),
    lambda d: d["spec"]["template"]["spec"].update(securityContext={"runAsNonRoot": "yes"}),
], ids=["replicas-as-string", "unknown-field", "bool-as-string"])
def test_k8s_validator_rejects_a_broken_deployment(break_it: Callable[[Doc], None]) -> None:
    doc = copy.deepcopy(k8s_by_kind("Deployment")["memq-beat"])
    validate_k8s(doc, K8S_VERSIONS[-1])
    break_it(doc)
    with pytest.raises(kubernetes_validate.ValidationError):
        validate_k8s(doc, K8S_VERSIONS[-1])


@pytest.mark.parametrize("break_it", [
    lambda s: s.update(maxReplicaCount="20"),
    lambda s: s.update(maxReplicas=20),  # the HPA's name, not KEDA's
    lambda s: s["scaleTargetRef"].pop("name"),
    lambda s: s["triggers"][0]["metadata"].update(listLength=20),
    lambda s: s["triggers"][0].pop("metadata"),
    lambda s: s.update(triggers=[]),
], ids=["max-as-string", "unknown-field", "no-target", "int-metadata", "no-metadata",
        "no-triggers"])
def test_keda_schema_rejects_a_broken_scaledobject(break_it: Callable[[Doc], None]) -> None:
    doc = copy.deepcopy(k8s_by_kind("ScaledObject")["memq-extract-worker"])
    keda_validator().validate(doc)
    break_it(doc["spec"])
    with pytest.raises(jsonschema.ValidationError):
        keda_validator().validate(doc)


def test_scaledobjects_scale_the_deployment_that_consumes_their_list() -> None:
    deployments = k8s_by_kind("Deployment")
    redis = k8s_by_kind("Service")["memq-redis"]
    scaled = k8s_by_kind("ScaledObject")
    lists = {}
    for name, so in scaled.items():
        target = deployments.get(so["spec"]["scaleTargetRef"]["name"])
        assert target is not None, f"{name}: no Deployment {so['spec']['scaleTargetRef']}"
        assert target["metadata"]["namespace"] == so["metadata"]["namespace"]
        assert "replicas" not in target["spec"], f"{name}: KEDA owns the replica count"
        assert 1 <= so["spec"]["minReplicaCount"] <= so["spec"]["maxReplicaCount"]
        [trigger] = so["spec"]["triggers"]
        meta = trigger["metadata"]
        assert trigger["type"] == "redis"
        assert meta["address"] == (f"{redis['metadata']['name']}."
                                   f"{redis['metadata']['namespace']}.svc.cluster.local:6379")
        assert int(meta["listLength"]) > 0
        assert queue_of(containers(target)[0]["command"]) == meta["listName"]
        lists[meta["listName"]] = target["metadata"]["name"]
    assert lists["memq.extract"] == "memq-extract-worker"
    assert "memq-beat" not in lists.values()


def test_beat_is_a_singleton() -> None:
    beat = k8s_by_kind("Deployment")["memq-beat"]
    assert beat["spec"]["replicas"] == 1
    assert beat["spec"]["strategy"] == {"type": "Recreate"}


def test_memq_containers_run_memq_subcommands_as_non_root() -> None:
    workloads = {**k8s_by_kind("Deployment"), **k8s_by_kind("StatefulSet")}
    assert set(k8s_by_kind("Deployment")) == DEPLOYMENTS
    for name, doc in workloads.items():
        pod = doc["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        for c in containers(doc):
            assert {"requests", "limits"} <= set(c["resources"]), f"{name}/{c['name']}"
            assert c["securityContext"]["allowPrivilegeEscalation"] is False
            if not c["image"].startswith("memq:"):
                continue
            command = c["command"]
            assert command[:1] == ["memq"] and command[1] in SUBCOMMANDS, f"{name}: {command}"
            assert (command[1] == "worker") == (queue_of(command) in QUEUES), f"{name}"
            assert {e.get("configMapRef", e.get("secretRef", {})).get("name")
                    for e in c["envFrom"]} == {"memq-config", "memq-secrets"}
    redis = workloads["memq-redis"]
    assert "--appendonly yes" in " ".join(containers(redis)[0]["args"])
    assert redis["spec"]["volumeClaimTemplates"], "Redis without a PersistentVolume"


def test_config_and_secret_set_only_memq_settings() -> None:
    [config] = k8s_by_kind("ConfigMap").values()
    [secret] = [d for d in load_all(K8S / "examples" / "secret.yaml") if d["kind"] == "Secret"]
    assert config["metadata"]["name"] == "memq-config"
    assert secret["metadata"]["name"] == "memq-secrets"
    keys = set(config["data"]) | set(secret["stringData"])
    assert keys <= known_env(), keys - known_env()
    assert all(isinstance(v, str) for v in config["data"].values())
    assert not {"MEMQ_NEO4J_PASSWORD", "MEMQ_LLM_API_KEY"} & set(config["data"])


# --- compose -----------------------------------------------------------------------------------

def test_compose_validates_against_the_compose_spec() -> None:
    compose_validator().validate(compose())


@pytest.mark.parametrize("break_it", [
    lambda s: s["api"].update(comand=["serve"]),
    lambda s: s["extract-worker"]["deploy"].update(replica=2),
    lambda s: s["redis"].update(volumes="redis-data:/data"),
    lambda s: s["api"].update(depends_on={"redis": {"condition": "service_up"}}),
], ids=["unknown-field", "misspelled-replicas", "volumes-not-a-list", "bad-condition"])
def test_compose_schema_rejects_a_broken_file(break_it: Callable[[Doc], None]) -> None:
    # (replicas as a string is allowed by compose-spec: it may be a ${VARIABLE})
    doc = compose()
    break_it(doc["services"])
    with pytest.raises(jsonschema.ValidationError):
        compose_validator().validate(doc)


def test_compose_redis_persists_with_aof() -> None:
    redis = compose()["services"]["redis"]
    command = " ".join(redis["command"])
    assert "--appendonly yes" in command and "--appendfsync everysec" in command
    assert any(v.endswith(":/data") for v in redis["volumes"])


def test_compose_memq_services() -> None:
    services = compose()["services"]
    memq = {name: s for name, s in services.items() if "build" in s}
    assert set(memq) == {"extract-worker", "store-worker", "beat", "flower", "api"}
    for name, s in memq.items():
        assert s["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}, name
        assert s["env_file"] == "memq.env", name
        assert "redis" in s["depends_on"], name
        if "entrypoint" not in s:  # the image's: memq
            assert s["command"][0] in SUBCOMMANDS, f"{name}: {s['command']}"
    assert queue_of(services["extract-worker"]["command"]) == "memq.extract"
    assert queue_of(services["store-worker"]["command"]) == "memq.store"
    assert services["extract-worker"]["deploy"]["replicas"] == 2
    assert services["beat"]["deploy"]["replicas"] == 1
    assert "8080:8080" in services["api"]["ports"][0]
    # Chroma's store is Chroma's: no memq service mounts its volume (memq's layout keeps its
    # write log short through collection settings, pipeline/adapters/chroma_layout.py)
    chroma_volume = services["chroma"]["volumes"][0].split(":")[0]
    for name, s in memq.items():
        assert not any(v.startswith(f"{chroma_volume}:") for v in s.get("volumes", [])), name
    for name, s in services.items():
        for dep, cond in s.get("depends_on", {}).items():
            assert dep in services, f"{name} depends on unknown {dep}"
            if cond["condition"] == "service_healthy":
                assert "test" in services[dep]["healthcheck"], f"{dep} has no healthcheck"


def test_compose_interpolates_only_variables_of_the_env_example() -> None:
    text = (DEPLOY / "compose.yaml").read_text(encoding="utf-8")
    used = set(re.findall(r"(?<!\$)\$\{(\w+)", text))
    assert used <= set(read_env(DEPLOY / "memq.env.example")), used


# --- env examples and the Dockerfile -----------------------------------------------------------

@pytest.mark.parametrize("name", ["memq.env.example", "examples/openai.env",
                                  "examples/ollama.env", "examples/vllm.env"])
def test_env_files_set_known_memq_settings(name: str) -> None:
    env = read_env(DEPLOY / name)
    assert set(env) <= known_env(), set(env) - known_env()
    if name.startswith("examples/"):
        assert {"MEMQ_LLM_BASE_URL", "MEMQ_LLM_MODEL", "MEMQ_LLM_API_KEY"} <= set(env)
        assert env["MEMQ_LLM_BASE_URL"].endswith("/v1")


def test_llm_examples_do_not_clash_with_chroma() -> None:
    assert read_env(DEPLOY / "examples/ollama.env")["MEMQ_LLM_BASE_URL"] == (
        "http://localhost:11434/v1")
    assert ":8001/" in read_env(DEPLOY / "examples/vllm.env")["MEMQ_LLM_BASE_URL"]


def test_dockerfile() -> None:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert dockerfile_problems(text) == []
    ins = instructions(text)
    installs = " ".join(args for word, args in ins if word == "RUN")
    assert '".[all]"' in installs
    # every source the build copies from the context passes deploy/Dockerfile.dockerignore
    allowed = {ln[1:].rstrip("/") for ln in
               (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
               if ln.startswith("!")}
    for word, args in ins:
        if word == "COPY" and not args.startswith("--from"):
            *sources, _ = shlex.split(args)
            assert {s.rstrip("/") for s in sources} <= allowed, sources


@pytest.mark.parametrize(("old", "new"), [
    ("HEALTHCHECK", "# HEALTHCHECK"),
    ('ENTRYPOINT ["memq"]', 'ENTRYPOINT ["celery"]'),
    ("USER 10001:10001", "USER root"),
    ('CMD ["serve"', 'CMD ["serv"'),
])
def test_dockerfile_check_catches_a_broken_dockerfile(old: str, new: str) -> None:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert old in text
    assert dockerfile_problems(text.replace(old, new)) != []
