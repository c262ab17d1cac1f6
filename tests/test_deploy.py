"""The files in deploy/ agree with the server they deploy.

Every YAML file parses; the Kubernetes probes, the container port and every
MOOSE_* name are routes, ports and settings the server really has, and the
probes answer 200 on a running instance configured from the ConfigMap; the
Dockerfile builds in stages, runs as a non-root user and its HEALTHCHECK works;
the compose file runs Redis, three server replicas and nginx with
deploy/nginx.conf. Neither Docker nor kubectl is needed. (tests/test_nginx.py
runs nginx.conf itself.) The Redis user and the TLS set-up README.md shows are
run against a real Redis: a server plays through them.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis
import yaml
from aiohttp import web
from redis.exceptions import NoPermissionError

import moose
from moose_server.app import create_app
from moose_server.settings import Settings
from moose_server.storage.connection import with_ca_certs
from moose_server.storage.embedded import free_port
from moose_server.storage.keys import profile_key

from helpers import RedisClusterNodes, make_certs, readme_acl, workout
from helpers.relay import Relay

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
SETTING_NAMES = {f"MOOSE_{f.name.upper()}" for f in fields(Settings)}
YAML_FILES = sorted([*DEPLOY.rglob("*.yaml"), *DEPLOY.rglob("*.yml")])

Doc = dict[str, Any]


def manifests() -> dict[str, Doc]:
    """The Kubernetes objects of deploy/k8s by kind (one of each)."""
    found: dict[str, Doc] = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") != "Kustomization":
                assert doc["kind"] not in found, f"two {doc['kind']}s"
                found[doc["kind"]] = doc
    return found


def pod_spec() -> Doc:
    """The Deployment's pod spec."""
    return manifests()["Deployment"]["spec"]["template"]["spec"]


def container() -> Doc:
    """The server container of the Deployment."""
    (only,) = pod_spec()["containers"]
    return only


def probes() -> dict[str, Doc]:
    """The container's probes by kind."""
    c = container()
    return {k: c[k] for k in ("startupProbe", "readinessProbe", "livenessProbe") if k in c}


def configmap_settings(**overrides: Any) -> Settings:
    """The Settings an instance builds from the ConfigMap (plus flags)."""
    return Settings.from_env(manifests()["ConfigMap"]["data"], **overrides)


def dockerfile() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuations joined."""
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def last_stage() -> list[tuple[str, str]]:
    """The instructions of the final (runtime) stage."""
    steps = dockerfile()
    start = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[start:]


def healthcheck_argv() -> list[str]:
    """The HEALTHCHECK command, exec form."""
    (args,) = [rest for word, rest in dockerfile() if word == "HEALTHCHECK"]
    _, _, cmd = args.partition("CMD ")
    argv = json.loads(cmd)
    assert isinstance(argv, list), "HEALTHCHECK CMD in exec (JSON) form"
    return argv


def compose() -> Doc:
    """deploy/compose.yaml."""
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def app_routes() -> set[str]:
    """The paths the server's app answers."""
    app = create_app(Settings(redis_url="redis://127.0.0.1:1/0"))
    return {r.canonical for r in app.router.resources()}


# -- every file ----------------------------------------------------------------------


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: str(p.relative_to(DEPLOY)))
def test_yaml_file_parses(path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    assert docs and all(isinstance(d, dict) for d in docs)


def test_there_are_yaml_files() -> None:
    names = {str(p.relative_to(DEPLOY)) for p in YAML_FILES}
    assert {"compose.yaml", "k8s/deployment.yaml", "k8s/kustomization.yaml"} <= names


def test_every_moose_name_in_deploy_is_a_setting() -> None:
    used: dict[str, set[str]] = {}
    for path in DEPLOY.rglob("*"):
        if path.is_file():
            for name in re.findall(r"\bMOOSE_[A-Z0-9_]+", path.read_text(errors="replace")):
                used.setdefault(name, set()).add(str(path.relative_to(DEPLOY)))
    unknown = {name: files for name, files in used.items() if name not in SETTING_NAMES}
    assert not unknown, f"not Settings fields: {unknown}"
    assert {"MOOSE_REDIS_URL", "MOOSE_TOKEN_SECRET"} <= set(used)


def test_readme_settings_table_lists_every_setting_once() -> None:
    text = (DEPLOY / "README.md").read_text()
    rows = re.findall(r"^\| `(MOOSE_[A-Z0-9_]+)` \|", text, re.MULTILINE)
    assert sorted(rows) == sorted(SETTING_NAMES)


# -- Kubernetes ----------------------------------------------------------------------


def test_kustomization_lists_every_manifest() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    files = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert sorted(kustomization["resources"]) == sorted(files)


def test_manifests_hold_every_kind() -> None:
    kinds = set(manifests())
    assert kinds == {
        "ConfigMap",
        "Deployment",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "Secret",
        "Service",
    }


def test_selectors_and_names_fit_together() -> None:
    m = manifests()
    deployment = m["Deployment"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    selected = deployment["spec"]["selector"]["matchLabels"]
    assert selected.items() <= labels.items()
    assert m["Service"]["spec"]["selector"].items() <= labels.items()
    assert m["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"].items() <= labels.items()
    target = m["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert deployment["spec"]["replicas"] == 3
    assert m["HorizontalPodAutoscaler"]["spec"]["minReplicas"] >= 3
    cpu = m["HorizontalPodAutoscaler"]["spec"]["metrics"][0]["resource"]
    assert cpu["name"] == "cpu"


def test_env_comes_from_the_configmap_and_the_secret() -> None:
    m = manifests()
    c = container()
    (source,) = c["envFrom"]
    assert source["configMapRef"]["name"] == m["ConfigMap"]["metadata"]["name"]
    secret = m["Secret"]
    keys = set(secret.get("stringData", {})) | set(secret.get("data", {}))
    refs = {e["name"]: e["valueFrom"] for e in c["env"] if "valueFrom" in e}
    token = refs["MOOSE_TOKEN_SECRET"]["secretKeyRef"]
    assert token["name"] == secret["metadata"]["name"] and token["key"] in keys
    for ref in refs.values():
        if "secretKeyRef" in ref:
            assert ref["secretKeyRef"]["key"] in keys
    assert "MOOSE_TOKEN_SECRET" not in m["ConfigMap"]["data"]
    assert "REPLACE" in yaml.safe_dump(secret), "the Secret is a placeholder"


def test_configmap_values_are_valid_settings() -> None:
    settings = configmap_settings()
    for name, value in manifests()["ConfigMap"]["data"].items():
        assert isinstance(value, str), f"{name}: ConfigMap values are strings"
        field = name.removeprefix("MOOSE_").lower()
        as_float = str(float(value)) if value.replace(".", "", 1).isdigit() else value
        assert str(getattr(settings, field)) in (value, as_float), name


def test_container_port_is_the_port_the_server_listens_on() -> None:
    (port,) = container()["ports"]
    assert port["containerPort"] == configmap_settings().port
    service_port = manifests()["Service"]["spec"]["ports"][0]
    assert service_port["targetPort"] in (port["name"], port["containerPort"])
    for probe in probes().values():
        assert probe["httpGet"]["port"] in (port["name"], port["containerPort"])


def test_probe_paths_are_routes_of_the_server() -> None:
    paths = {p["httpGet"]["path"] for p in probes().values()}
    assert probes()["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert probes()["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert paths <= app_routes()


def test_pod_runs_as_non_root_with_limits() -> None:
    spec, c = pod_spec(), container()
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["runAsUser"] != 0
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert c["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert {"cpu", "memory"} <= set(c["resources"]["requests"])
    assert "memory" in c["resources"]["limits"]


def test_pod_stops_taking_sockets_then_drains_within_its_grace_period() -> None:
    command = container()["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep"
    pre_stop = float(command[1])
    assert pre_stop >= 5, "load balancers need time to see the pod go"
    drain = configmap_settings().drain_grace
    # preStop, then the drain and the shutdown that follows it (each up to drain_grace).
    assert pod_spec()["terminationGracePeriodSeconds"] > pre_stop + 2 * drain


@pytest.mark.slow
async def test_probes_answer_200_on_an_instance_built_from_the_configmap(
    redis_url: str, tmp_path: Path
) -> None:
    port = free_port()
    settings = configmap_settings(
        host="127.0.0.1", port=port, redis_url=redis_url, data_dir=str(tmp_path)
    )
    runner = web.AppRunner(create_app(settings), shutdown_timeout=1.0)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", port).start()
        async with aiohttp.ClientSession() as session:
            for probe in probes().values():
                url = f"http://127.0.0.1:{port}{probe['httpGet']['path']}"
                async with session.get(url) as answer:
                    assert answer.status == 200, url
        # The image's HEALTHCHECK, as Docker would run it.
        assert await run_healthcheck(port) == 0
    finally:
        await runner.cleanup()
    assert await run_healthcheck(port) != 0, "the HEALTHCHECK fails when nothing answers"


async def run_healthcheck(port: int) -> int:
    """Run the Dockerfile's HEALTHCHECK against 127.0.0.1:`port`; its exit code."""
    argv = healthcheck_argv()
    assert argv[0] == "python"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *argv[1:],
        env={"MOOSE_PORT": str(port)},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    async with asyncio.timeout(30):
        return await process.wait()


# -- Dockerfile ----------------------------------------------------------------------


def test_dockerfile_builds_in_stages() -> None:
    froms = [rest for word, rest in dockerfile() if word == "FROM"]
    assert len(froms) >= 2
    assert all(re.search(r"\bAS \w+", f, re.IGNORECASE) for f in froms)
    build = froms[0].split()[-1]
    runtime = " ".join(rest for _, rest in last_stage())
    assert f"from={build}" in runtime, "the runtime stage takes the build stage's wheels"


def test_dockerfile_runs_as_a_non_root_user() -> None:
    users = [rest for word, rest in last_stage() if word == "USER"]
    assert users, "USER in the runtime stage"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    if user.isdigit():
        assert int(user) == pod_spec()["securityContext"]["runAsUser"]


def test_dockerfile_serves_on_the_exposed_port_with_a_healthcheck() -> None:
    steps = dict(last_stage())
    assert steps["EXPOSE"].split() == [str(Settings().port)]
    assert container()["ports"][0]["containerPort"] == Settings().port
    assert steps["STOPSIGNAL"] == "SIGTERM"
    assert "/healthz" in " ".join(healthcheck_argv())
    assert "/healthz" in app_routes()
    cmd = " ".join(json.loads(steps["CMD"]))
    assert "exec moose serve" in cmd
    assert "--host 0.0.0.0" in cmd
    assert "MOOSE_REDIS_URL" in cmd  # required...
    assert "--redis" not in cmd  # ...but read from the environment: no password in argv


def test_dockerignore_lets_in_what_the_build_copies() -> None:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    assert "*" in lines, "an allow list: everything else stays out"
    for word, rest in dockerfile():
        if word == "COPY" and "--from" not in rest:
            *sources, _ = shlex.split(rest)
            for source in sources:
                name = source.rstrip("/").removeprefix("./")
                assert name in allowed, f"{name} is excluded by .dockerignore"
                assert (ROOT / name).exists(), name


# -- compose -------------------------------------------------------------------------


def test_compose_runs_redis_three_servers_and_nginx() -> None:
    services = compose()["services"]
    assert set(services) == {"redis", "server", "nginx"}
    assert services["server"]["deploy"]["replicas"] == 3
    redis_cmd = " ".join(services["redis"]["command"])
    assert "--appendonly yes" in redis_cmd
    assert "noeviction" in redis_cmd
    assert any(v.endswith(":/data") for v in services["redis"]["volumes"])


def test_compose_servers_share_redis_and_the_token_secret() -> None:
    server = compose()["services"]["server"]
    env = server["environment"]
    assert env["MOOSE_REDIS_URL"].startswith("redis://redis:")
    assert "${MOOSE_TOKEN_SECRET" in env["MOOSE_TOKEN_SECRET"]
    build = server["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    placeholders = {k: re.sub(r"\$\{[^}]*\}", "x", str(v)) for k, v in env.items()}
    placeholders["MOOSE_TOKEN_SECRET"] = "y" * 44  # the operator's .env: 32 random bytes
    Settings.from_env(placeholders)
    assert "redis" in server["depends_on"]


def test_compose_nginx_uses_deploy_nginx_conf_and_reaches_the_servers() -> None:
    services = compose()["services"]
    nginx = services["nginx"]
    mounts = {v.split(":")[0]: v.split(":")[1] for v in nginx["volumes"]}
    assert mounts["./nginx.conf"] == "/etc/nginx/nginx.conf"
    # nginx.conf includes nginx/*.conf from its own folder.
    assert mounts["./nginx"] == "/etc/nginx/nginx"
    assert "server" in nginx["depends_on"]
    server_port = Settings.from_env({"MOOSE_PORT": services["server"]["environment"]["MOOSE_PORT"]})
    upstream = (DEPLOY / "nginx" / "upstream.conf").read_text()
    assert re.findall(r"^server (\S+?)[ ;]", upstream, re.MULTILINE) == [
        f"server:{server_port.port}"
    ]
    listen = re.findall(r"^listen (\d+)", (DEPLOY / "nginx" / "listen.conf").read_text(), re.M)
    (published,) = nginx["ports"]
    assert published.rsplit(":", 1)[1] == listen[0]


# -- nginx.conf (text only; test_nginx.py runs it) ------------------------------------


def nginx_location(path: str) -> str:
    """The body of `location = path { ... }` in nginx.conf."""
    text = (DEPLOY / "nginx.conf").read_text()
    match = re.search(r"location = " + re.escape(path) + r" \{(.*?)\n        \}", text, re.S)
    assert match, f"no location = {path}"
    return match.group(1)


def test_nginx_conf_includes_files_that_exist() -> None:
    text = (DEPLOY / "nginx.conf").read_text()
    includes = re.findall(r"^\s*include (\S+);", text, re.MULTILINE)
    assert sorted(includes) == ["nginx/listen.conf", "nginx/tls.conf", "nginx/upstream.conf"]
    for name in includes:
        assert (DEPLOY / name).is_file()
    # The tests set these on the command line: the file must not.
    assert not re.search(r"^\s*(pid|daemon|listen)\s", text, re.MULTILINE)


def test_nginx_conf_proxies_the_server_routes() -> None:
    routes = app_routes()
    for path in ("/ws", "/healthz", "/readyz"):
        assert path in routes
        assert "proxy_pass http://moose;" in nginx_location(path)
    assert "proxy_pass http://moose;" in nginx_location("/metrics")


def test_nginx_keeps_idle_websockets_well_past_the_heartbeat() -> None:
    ws = nginx_location("/ws")
    (timeout,) = re.findall(r"proxy_read_timeout (\d+)s;", ws)
    heartbeat = max(Settings().heartbeat, configmap_settings().heartbeat)
    assert int(timeout) >= 3 * heartbeat
    assert "http_503" in ws, "a draining instance's 503 sends the socket elsewhere"
    text = (DEPLOY / "nginx.conf").read_text()
    assert "proxy_set_header Upgrade $http_upgrade;" in text
    assert "least_conn;" in text


# -- Redis: the README's least-privilege user, and TLS with a CA --------------------------

ADMIN_PASSWORD = "admin-Pa55-of-the-test"
USER_PASSWORD = "moose-Pa55-of-the-test"


def acl_redis(redis_factory: Any) -> int:
    """A Redis with --requirepass and the README's `moose` user; its port."""
    port = int(redis_factory(appendonly=False, extra=["--requirepass", ADMIN_PASSWORD]).port)
    with redis.Redis(port=port, password=ADMIN_PASSWORD) as admin:
        admin.execute_command("ACL", "SETUSER", "moose", *readme_acl(USER_PASSWORD))
    return port


def test_the_readme_redis_user_may_run_every_command_of_the_scripts() -> None:
    # A script runs with its caller's rights: a command added to a script must be added
    # to the README's user too (the workout below might not reach that script).
    allowed = {rule[1:].lower() for rule in readme_acl("x") if rule.startswith("+")}
    lua = ROOT / "server" / "moose_server" / "storage" / "lua"
    text = "".join(path.read_text() for path in lua.glob("*.lua"))
    used = {name.lower() for name in re.findall(r"redis\.p?call\(\s*['\"](\w+)", text)}
    assert used and used <= allowed, sorted(used - allowed)


def denied(port: int) -> list[dict[str, Any]]:
    """What Redis refused a user since it started (ACL LOG)."""
    with redis.Redis(port=port, password=ADMIN_PASSWORD, decode_responses=True) as admin:
        return list(admin.acl_log())


@pytest.mark.slow
async def test_a_server_does_everything_as_the_readme_redis_user(moose_serve, redis_factory):
    port = acl_redis(redis_factory)
    url = f"redis://moose:{USER_PASSWORD}@127.0.0.1:{port}/0"
    server = await asyncio.to_thread(moose_serve, "--redis", url, "--match-wait", "0.2")
    done = await workout(server.url)
    assert await asyncio.to_thread(server.stop) == 0
    assert all(len(r) == 1 for r in done["results"]) and set(done["http"].values()) == {200}
    assert denied(port) == []  # no command of the server was refused
    assert "NOPERM" not in server.log.read_text()
    # And nothing more: no key or channel outside moose:, no admin command.
    with redis.Redis(port=port, username="moose", password=USER_PASSWORD) as user:
        assert user.set(profile_key("p_test"), 1)
        for refused in (
            lambda: user.set("other", 1),
            lambda: user.publish("other", "x"),
            user.flushall,
            lambda: user.keys("*"),
            lambda: user.config_get("*"),
            user.script_flush,
        ):
            with pytest.raises(NoPermissionError):
                refused()


async def test_a_server_does_everything_as_the_readme_user_on_a_cluster(
    moose_serve, redis_cluster: RedisClusterNodes
):
    ports = [node.port for node in redis_cluster.nodes]
    for port in ports:
        with redis.Redis(port=port) as admin:
            admin.execute_command("ACL", "SETUSER", "moose", *readme_acl(USER_PASSWORD, True))
    try:
        url = redis_cluster.cluster_url.replace("://", f"://moose:{USER_PASSWORD}@")
        server = await asyncio.to_thread(moose_serve, "--redis", url, "--match-wait", "0.2")
        done = await workout(server.url)
        assert await asyncio.to_thread(server.stop) == 0
        assert set(done["http"].values()) == {200}
        for port in ports:
            with redis.Redis(port=port) as admin:
                assert admin.acl_log() == [], port
    finally:
        for port in ports:  # the session's cluster, as it was for the tests after this one
            with redis.Redis(port=port) as admin:
                admin.acl_deluser("moose")
                admin.acl_log_reset()


def test_the_redis_ca_setting_needs_a_tls_url_and_a_file(tmp_path: Path):
    ca = tmp_path / "ca.pem"
    ca.write_text("a CA")
    assert Settings(redis_url="rediss://h:6380/0", redis_ca_certs=str(ca)).redis_ca_certs
    with pytest.raises(ValueError, match="rediss://"):
        Settings(redis_url="redis://h:6379/0", redis_ca_certs=str(ca))
    with pytest.raises(ValueError, match="no such file"):
        Settings(redis_url="rediss://h:6380/0", redis_ca_certs=str(tmp_path / "none.pem"))
    # The setting goes into the URL redis-py is given, in place of one the URL had.
    url = "rediss://u:p@h:6380/0?ssl_ca_certs=/old.pem&db=0"
    assert with_ca_certs(url, "/new.pem") == "rediss://u:p@h:6380/0?db=0&ssl_ca_certs=/new.pem"
    assert with_ca_certs(url, "") == url


@pytest.mark.slow
async def test_a_server_reaches_redis_over_tls_with_the_readme_ca(
    moose_serve, redis_factory, tmp_path: Path
):
    # The bundled valkey-server has no TLS: a relay serves the real Redis over TLS.
    port, certs = acl_redis(redis_factory), make_certs(tmp_path / "certs")
    async with Relay(port, certs.server_context()) as relay:
        url = f"rediss://moose:{USER_PASSWORD}@127.0.0.1:{relay.port}/0"
        for name, env in {
            "setting": {"MOOSE_REDIS_URL": url, "MOOSE_REDIS_CA_CERTS": str(certs.ca)},
            "url": {"MOOSE_REDIS_URL": f"{url}?ssl_ca_certs={certs.ca}"},
        }.items():
            server = await asyncio.to_thread(moose_serve, env=env, log=f"{name}.log")
            results = await asyncio.gather(
                *(
                    moose.play_bot(server.url, "greedy", 1, name=f"b{i}", max_players=2, seed=i)
                    for i in range(2)
                )
            )
            assert [len(r) for r in results] == [1, 1]
            assert await asyncio.to_thread(server.stop) == 0
        # Without the CA the certificate is not trusted: the server stops at once, saying why.
        server = await asyncio.to_thread(
            moose_serve, env={"MOOSE_REDIS_URL": url}, wait=False, log="no-ca.log"
        )
        assert server.proc is not None
        assert await asyncio.to_thread(server.proc.wait, 60) == 1
    output = "".join(p.read_text() for p in tmp_path.glob("*.log"))
    assert "certificate verify failed" in (tmp_path / "no-ca.log").read_text()
    assert USER_PASSWORD not in output and "rediss://moose:***@" in output
    assert denied(port) == []
