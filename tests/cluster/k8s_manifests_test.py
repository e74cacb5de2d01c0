#!/usr/bin/env python3
"""deploy/kubernetes/: the manifests parse and hold what a GPU node agent must.

Usage: k8s_manifests_test.py DEPLOY_DIR GPUWARDEN_BINARY
Checks the DaemonSet (host paths of the kubelet's pod-resources folder and /dev/kmsg, NODE_NAME
from the downward API, probes on /health at the metrics port, the least privilege that works,
tolerations and a node selector for GPU nodes, a writable data folder on a read-only root), the
Service, the ServiceMonitor selecting it, and the Containerfile (Debian 12 only; its runtime
packages hold every library the built binary needs; the binary accepts the DaemonSet's flags).
Prints one line per problem and exits 1 when there is any.
"""
import os
import re
import subprocess
import sys

import yaml

problems = []


def need(cond, what):
    if not cond:
        problems.append(what)
    return cond


def load(deploy):
    docs = {}
    for name in sorted(os.listdir(deploy)):
        if not name.endswith(".yaml"):
            continue
        path = os.path.join(deploy, name)
        try:
            with open(path, encoding="utf-8") as f:
                items = [d for d in yaml.safe_load_all(f) if d is not None]
        except yaml.YAMLError as e:
            problems.append(f"{path}: does not parse: {e}")
            continue
        for d in items:
            where = f"{path}: {d.get('kind')}"
            need(isinstance(d.get("apiVersion"), str), f"{where}: no apiVersion")
            need(isinstance(d.get("metadata", {}).get("name"), str), f"{where}: no metadata.name")
            docs.setdefault(d.get("kind"), []).append((path, d))
    return docs


def one(docs, kind):
    items = docs.get(kind, [])
    need(len(items) == 1, f"expected one {kind}, found {len(items)}")
    return items[0] if items else (None, {})


def flag(args, name):
    """The value of --name=V or --name V in a container's args."""
    for i, a in enumerate(args):
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
        if a == name and i + 1 < len(args):
            return args[i + 1]
    return None


def under(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def check_daemonset(path, ds, text):
    spec = ds.get("spec", {}).get("template", {}).get("spec", {})
    where = f"{path}: DaemonSet"
    cs = spec.get("containers", [])
    if not need(len(cs) == 1, f"{where}: expected one container"):
        return None
    c = cs[0]
    args = c.get("args", [])
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}

    def host_mount(host, typ):
        vol = [n for n, v in volumes.items() if v.get("hostPath", {}).get("path") == host]
        if not need(vol, f"{where}: no hostPath volume for {host}"):
            return None
        need(volumes[vol[0]]["hostPath"].get("type") == typ, f"{where}: hostPath {host} should have type {typ}")
        m = [m for m in c.get("volumeMounts", []) if m["name"] == vol[0]]
        if need(m, f"{where}: hostPath {host} is not mounted"):
            return m[0]
        return None

    pr = host_mount("/var/lib/kubelet/pod-resources", "Directory")
    if pr:
        need(pr.get("readOnly") is True, f"{where}: the pod-resources folder is mounted writable")
        sock = flag(args, "--pod-resources-socket")
        need(sock is not None and under(sock, pr["mountPath"]),
             f"{where}: --pod-resources-socket ({sock}) is not under the pod-resources mount")
    km = host_mount("/dev/kmsg", "CharDevice")
    if km:
        need(km["mountPath"] == "/dev/kmsg" and km.get("readOnly") is True, f"{where}: /dev/kmsg mounted elsewhere or writable")

    env = {e["name"]: e for e in c.get("env", [])}
    need(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName",
         f"{where}: NODE_NAME is not the downward API's spec.nodeName")

    ports = {p.get("name"): p for p in c.get("ports", [])}
    metrics = ports.get("metrics")
    if need(metrics is not None, f"{where}: no container port named metrics"):
        listen = flag(args, "--listen") or ":9400"
        need(listen.rsplit(":", 1)[-1] == str(metrics["containerPort"]),
             f"{where}: --listen {listen} is not the metrics port {metrics['containerPort']}")
        for probe in ("livenessProbe", "readinessProbe"):
            g = c.get(probe, {}).get("httpGet", {})
            need(g.get("path") == "/health", f"{where}: {probe} is not an HTTP GET of /health")
            need(g.get("port") in ("metrics", metrics["containerPort"]), f"{where}: {probe} is not on the metrics port")

    sc = c.get("securityContext", {})
    need(sc.get("readOnlyRootFilesystem") is True, f"{where}: the root filesystem is writable")
    if sc.get("privileged"):
        # Allowed for one reason, which the manifest must give where it asks for it.
        need(km is not None, f"{where}: privileged without the /dev/kmsg mount that needs it")
        need(re.search(r"#\s*privileged: only for /dev/kmsg", text) is not None,
             f"{where}: privileged without the comment saying why")
    else:
        need(sc.get("allowPrivilegeEscalation") is False, f"{where}: privilege escalation allowed")
        caps = sc.get("capabilities", {})
        need(caps.get("drop") == ["ALL"], f"{where}: capabilities are not dropped (drop: [ALL])")
        need(set(caps.get("add", [])) <= {"SYSLOG"}, f"{where}: capabilities added beyond SYSLOG: {caps.get('add')}")
    need(spec.get("automountServiceAccountToken") is False, f"{where}: a service-account token it never uses")
    need(not spec.get("hostNetwork") and not spec.get("hostPID"), f"{where}: host network or PID namespace")

    data = flag(args, "--data-dir")
    if need(data is not None, f"{where}: no --data-dir"):
        m = mounts.get(data)
        need(m is not None and not m.get("readOnly"), f"{where}: --data-dir {data} is not a writable volume mount")
    rt = env.get("GPUWARDEN_RUNTIME_DIR", {}).get("value")
    need(rt in mounts and not mounts[rt].get("readOnly"), f"{where}: the runtime folder {rt} is not a writable mount")

    tol = spec.get("tolerations", [])
    need(any(t.get("key") == "nvidia.com/gpu" and t.get("operator") == "Exists" for t in tol),
         f"{where}: no toleration for the nvidia.com/gpu taint")
    placement = yaml.safe_dump({"nodeSelector": spec.get("nodeSelector"), "affinity": spec.get("affinity")})
    need("nvidia.com/gpu" in placement, f"{where}: neither nodeSelector nor affinity picks GPU nodes")
    image = c.get("image", "")
    need(":" in image and not image.endswith(":latest"), f"{where}: image {image!r} has no pinned tag")
    return args


def check_service(path, svc, ds):
    where = f"{path}: Service"
    sel = svc.get("spec", {}).get("selector", {})
    labels = ds.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {})
    need(sel and all(labels.get(k) == v for k, v in sel.items()), f"{where}: selector {sel} does not select the DaemonSet's pods")
    ports = {p.get("name"): p for p in svc.get("spec", {}).get("ports", [])}
    need(ports.get("metrics", {}).get("port") == 9400 and ports["metrics"].get("targetPort") == "metrics",
         f"{where}: no port metrics 9400 -> the container's metrics port")


def check_servicemonitor(path, sm, svc):
    where = f"{path}: ServiceMonitor"
    spec = sm.get("spec", {})
    ml = spec.get("selector", {}).get("matchLabels", {})
    labels = svc.get("metadata", {}).get("labels", {})
    need(ml and all(labels.get(k) == v for k, v in ml.items()), f"{where}: selector {ml} does not select the Service")
    ns = svc.get("metadata", {}).get("namespace")
    need(ns in spec.get("namespaceSelector", {}).get("matchNames", []) or sm["metadata"].get("namespace") == ns,
         f"{where}: does not look in the Service's namespace {ns}")
    eps = spec.get("endpoints", [])
    if need(len(eps) == 1, f"{where}: expected one endpoint"):
        ep = eps[0]
        need(ep.get("port") == "metrics" and ep.get("path", "/metrics") == "/metrics", f"{where}: not the metrics port's /metrics")
        # The workload labels must reach Prometheus as themselves, not as exported_pod, and a
        # GPU no pod holds must not carry the agent's own pod.
        need(ep.get("honorLabels") is True, f"{where}: honorLabels is not true")
        drops = [r.get("regex", "") for r in ep.get("relabelings", []) if r.get("action") == "labeldrop"]
        for label in ("pod", "namespace", "container"):
            need(any(re.fullmatch(rx, label) for rx in drops), f"{where}: the target's {label} label is not dropped")


def needed_packages(binary):
    out = subprocess.run(["objdump", "-p", binary], capture_output=True, text=True, check=True).stdout
    libs = re.findall(r"^\s*NEEDED\s+(\S+)", out, re.M)
    cache = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    paths = {}
    for lib in libs:
        m = re.search(r"^\s*" + re.escape(lib) + r" \(libc6,x86-64\) => (\S+)", cache, re.M)
        if not need(m, f"{binary}: {lib} is not in the linker cache"):
            continue
        real = os.path.realpath(m.group(1))
        # dpkg records a library under /lib or /usr/lib, whichever its package ships.
        paths[lib] = {m.group(1), real, "/usr" + m.group(1), "/usr" + real, real.removeprefix("/usr")}
    # One dpkg query for every path: each one reads dpkg's whole database.
    everything = sorted(set().union(*paths.values())) if paths else []
    r = subprocess.run(["dpkg", "-S"] + everything, capture_output=True, text=True)
    owner = {}
    for line in r.stdout.splitlines():
        pkg, _, path = line.partition(": ")
        owner[path.strip()] = pkg.split(":", 1)[0].strip()
    pkgs = {}
    for lib, candidates in paths.items():
        found = next((owner[p] for p in sorted(candidates) if p in owner), None)
        if need(found, f"{binary}: no Debian package holds {lib}"):
            pkgs[lib] = found
    return pkgs


def check_containerfile(path, binary, args):
    text = open(path, encoding="utf-8").read()
    froms = re.findall(r"^FROM\s+(\S+)", text, re.M)
    need(froms and all(re.fullmatch(r"debian:12(-slim)?", f) for f in froms), f"{path}: a base that is not Debian 12: {froms}")
    stages = text.split("\nFROM ")
    runtime = stages[-1]
    joined = runtime.replace("\\\n", " ")
    installed = set()
    for part in re.split(r"&&|\n", joined):
        words = part.split()
        if "apt-get" in words and "install" in words:
            after = words[words.index("install") + 1:]
            installed |= {w for w in after if not w.startswith("-")}
    need(installed, f"{path}: the runtime stage installs no packages")
    # Sanitizer runtimes are the test build's own, never the image's.
    for lib, pkg in needed_packages(binary).items():
        if pkg.startswith(("libasan", "libubsan")):
            continue
        need(pkg in installed, f"{path}: the runtime stage does not install {pkg} ({lib})")
    need(re.search(r"^COPY --from=\S+ \S*/bin/gpuwarden /usr/bin/gpuwarden$", runtime, re.M), f"{path}: the binary is not copied")
    need(re.search(r'^ENTRYPOINT \["/usr/bin/gpuwarden"\]', runtime, re.M), f"{path}: the entry point is not the binary")
    if args:
        helptext = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True).stdout
        for a in args:
            if a.startswith("--"):
                name = a.split("=", 1)[0]
                need(re.search(re.escape(name) + r"\b", helptext), f"{path}: gpuwarden serve has no {name}")


def main():
    deploy, binary = sys.argv[1], sys.argv[2]
    docs = load(deploy)
    ds_path, ds = one(docs, "DaemonSet")
    svc_path, svc = one(docs, "Service")
    sm_path, sm = one(docs, "ServiceMonitor")
    ns_path, ns = one(docs, "Namespace")
    name = ns.get("metadata", {}).get("name")
    for kind, items in docs.items():
        for path, d in items:
            if kind != "Namespace":
                need(d["metadata"].get("namespace") == name, f"{path}: {kind} is not in namespace {name}")
    args = None
    if ds_path:
        args = check_daemonset(ds_path, ds, open(ds_path, encoding="utf-8").read())
    if svc_path:
        check_service(svc_path, svc, ds)
    if sm_path:
        check_servicemonitor(sm_path, sm, svc)
    check_containerfile(os.path.join(deploy, "Containerfile"), binary, args)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"ok: {sum(len(v) for v in docs.values())} manifests and the Containerfile")
    return 0


if __name__ == "__main__":
    sys.exit(main())
