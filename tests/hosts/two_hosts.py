#!/usr/bin/env python3
"""Two hosts, rehearsed on one machine (issue 17 item 7): two network namespaces joined by a veth
pair act as two nodes, each with its own address and host name.

  mpirun     `mpirun --hostfile` started on host A, its daemon on host B through an rsh agent
             (netns_rsh_agent.sh) as ssh would start it; 2 ranks (one per host) and 4 ranks (two
             per host) train the asset model: losses, gradient norms and final weights equal the
             same run under a single-host mpirun, bitwise.
  link down  the veth is taken down while a 2-host run trains. With ZEROTRAIN_COMM_TIMEOUT=6:
             every rank exits non-zero within the timeout (+ a margin) with the line naming the
             peer it waits for and that peer's host, mpirun exits non-zero, and no process is
             left in either namespace (the hosts' tcp_retries2 lowered to 5, see below). With a
             long timeout and the kernel's defaults: OpenMPI's daemons notice the lost node by
             keepalive, mpirun names it and ends the job, and nothing is left.
  torchrun   one process per host started torchrun-style (RANK, WORLD_SIZE, MASTER_ADDR,
             MASTER_PORT): the ranks meet at MASTER_ADDR:MASTER_PORT across the hosts (the TCP
             rendezvous that bootstraps NCCL) and join one MPI world through OpenMPI's name server
             (comm/mpi_join.h); CPU training so started equals the single-host mpirun run bitwise.

Run as root: two_hosts.py --zerotrain BIN --tests-binary zerotrain_tests --work DIR
Exits 77 (ctest: skipped) with a message where the namespaces cannot be made (not root, no `ip`,
no `unshare`, no mpirun, or `ip netns add` refused). The namespaces are deleted at the end, also
on failure or Ctrl-C, and stale ones of a killed earlier run are deleted first.
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
AGENT = HERE / "netns_rsh_agent.sh"
RANK_STATUS = HERE / "rank_status.sh"
MODEL = ROOT / "assets/models/kjv-llama-4m/config.json"
TOKENIZER = ROOT / "assets/tokenizers/kjv-bpe-4096/tokenizer.json"
TEXT = ROOT / "docs/ARCHITECTURE.md"
NET = "10.231.0"  # host A is NET.1, host B is NET.2; the namespaces keep it off the real network
SKIP = 77
STEPS = 8
COMM_TIMEOUT_S = 6  # ZEROTRAIN_COMM_TIMEOUT of the link-down run
EXIT_MARGIN_S = 5  # how long after the timeout a rank may take to exit
# OpenMPI's daemons notice a lost node by TCP keepalive (defaults: 300 s idle, then 9 probes 20 s
# apart). Probing after 10 s makes mpirun and the remote daemon give up within ~20 s of the link
# going down, after the ranks' own timeout has ended them (docs/LAUNCH.md).
KEEPALIVE = ["--mca", "oob_tcp_keepalive_time", "10", "--mca", "oob_tcp_keepalive_intvl", "2",
             "--mca", "oob_tcp_keepalive_probes", "3"]


# After the ranks' own timeout, mpirun and the cut-off node's daemon hold unacknowledged data (the
# abort order, the ranks' exit reports), so keepalive never fires: they give up when the kernel
# does, after tcp_retries2 retransmissions (15 by default: about 15 minutes). In the timeout case
# the hosts give up after 5 (about 13 s, doubling from 200 ms); docs/LAUNCH.md says what a cluster
# needs.
TCP_RETRIES2_FAST = 5
TCP_RETRIES2_DEFAULT = 15


class Skip(Exception):
    pass


def sh(*cmd, check=True):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=check)


class Hosts:
    """Two namespaces, zt-h<pid>-a (NET.1) and zt-h<pid>-b (NET.2), joined by a veth pair."""

    def __init__(self):
        tag = f"h{os.getpid()}"
        self.ns = {"a": f"zt-{tag}-a", "b": f"zt-{tag}-b"}
        self.dev = {"a": f"zt{tag}a"[-15:], "b": f"zt{tag}b"[-15:]}
        self.ip = {"a": f"{NET}.1", "b": f"{NET}.2"}

    def __enter__(self):
        delete_stale_namespaces()
        try:
            sh("ip", "netns", "add", self.ns["a"])
        except subprocess.CalledProcessError as e:
            raise Skip(f"`ip netns add` failed: {e.stderr.strip()}")
        try:
            sh("ip", "netns", "add", self.ns["b"])
            sh("ip", "link", "add", self.dev["a"], "netns", self.ns["a"], "type", "veth", "peer",
               "name", self.dev["b"], "netns", self.ns["b"])
            for h in "ab":
                sh("ip", "-n", self.ns[h], "addr", "add", f"{self.ip[h]}/24", "dev", self.dev[h])
                sh("ip", "-n", self.ns[h], "link", "set", self.dev[h], "up")
                sh("ip", "-n", self.ns[h], "link", "set", "lo", "up")
        except subprocess.CalledProcessError as e:
            self.__exit__()
            raise Skip(f"could not connect two network namespaces: {' '.join(e.cmd)}: "
                       f"{e.stderr.strip()}")
        return self

    def __exit__(self, *exc):
        for pid in self.pids():
            kill(pid)
        for ns in self.ns.values():
            sh("ip", "netns", "del", ns, check=False)

    def pids(self):
        """Every process inside either namespace."""
        out = []
        for ns in self.ns.values():
            p = sh("ip", "netns", "pids", ns, check=False)
            out += [int(x) for x in p.stdout.split()]
        return out

    def set_link(self, state):
        sh("ip", "-n", self.ns["b"], "link", "set", self.dev["b"], state)

    def set_tcp_retries2(self, retries):
        for ns in self.ns.values():
            sh("ip", "netns", "exec", ns, "sh", "-c",
               f"echo {retries} > /proc/sys/net/ipv4/tcp_retries2")

    def exec_as(self, h):
        """The prefix that runs a command on host h: its namespace and its own host name."""
        return ["ip", "netns", "exec", self.ns[h], "unshare", "--uts", "sh", "-c",
                'hostname "$0" && exec "$@"', self.ns[h]]

    def hosts_env(self):
        return ",".join(f"{self.ip[h]}={self.ns[h]}" for h in "ab")


def kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def delete_stale_namespaces():
    """Namespaces of an earlier run that was killed before it could delete them."""
    listed = sh("ip", "netns", "list", check=False).stdout
    for name in re.findall(r"^(zt-h(\d+)-[ab])\b", listed, re.M):
        ns, pid = name[0], int(name[1])
        if not pathlib.Path(f"/proc/{pid}").exists():
            for p in sh("ip", "netns", "pids", ns, check=False).stdout.split():
                kill(int(p))
            sh("ip", "netns", "del", ns, check=False)


def check_can_run():
    if os.geteuid() != 0:
        raise Skip("needs root to make network namespaces")
    for tool in ["ip", "unshare", "mpirun"]:
        if shutil.which(tool) is None:
            raise Skip(f"`{tool}` is not installed")


class Rehearsal:
    def __init__(self, args, hosts):
        self.zt = args.zerotrain
        self.tests_binary = args.tests_binary
        self.hosts = hosts
        self.work = pathlib.Path(args.work)
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(parents=True)
        self.tokens = self.work / "tok.bin"
        subprocess.run([self.zt, "data", "prepare", "--tokenizer", str(TOKENIZER), "--input",
                        str(TEXT), "--output", str(self.tokens)], check=True, capture_output=True)
        self.env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1",
                        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", ZT_NETNS_HOSTS=hosts.hosts_env())
        self.failures = []
        self.figures = {}

    def fail(self, what):
        print(f"FAIL {what}", flush=True)
        self.failures.append(what)

    def ok(self, what):
        print(f"ok   {what}", flush=True)

    def train_args(self, out, steps=STEPS):
        return [self.zt, "train", "--model", str(MODEL), "--data", str(self.tokens), "--out",
                str(out), "--device", "cpu", "--steps", str(steps), "--log-every", "1",
                "--seq-len", "32", "--micro-batch", "2", "--zero-stage", "2"]

    def two_host_mpirun(self, n, name, extra=()):
        """mpirun on host A over both hosts, each rank under rank_status.sh."""
        slots = n // 2
        hostfile = self.work / f"{name}.hosts"
        hostfile.write_text(f"{NET}.1 slots={slots}\n{NET}.2 slots={slots}\n")
        status = self.work / f"{name}.status"
        status.mkdir()
        return self.hosts.exec_as("a") + [
            "mpirun", "-n", str(n), "--hostfile", str(hostfile), "--bind-to", "none",
            "--mca", "plm_rsh_agent", str(AGENT),
            "--mca", "oob_tcp_if_include", f"{NET}.0/24", "--mca", "btl_tcp_if_include",
            f"{NET}.0/24", *KEEPALIVE, "--output-filename", str(self.work / f"{name}.output"),
            "-x", "OMP_NUM_THREADS", "-x", f"ZT_RANK_STATUS_DIR={status}", *extra,
            str(RANK_STATUS)], status

    def run(self, cmd, timeout=120):
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=self.env, start_new_session=True)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            return -9, f"(killed after {timeout} s)\n{out}"
        return p.returncode, out

    def nothing_left(self, what, limit=15):
        t0 = time.time()
        while self.hosts.pids() and time.time() - t0 < limit:
            time.sleep(0.1)
        left = self.hosts.pids()
        if left:
            names = [pathlib.Path(f"/proc/{p}/comm").read_text().strip()
                     for p in left if pathlib.Path(f"/proc/{p}/comm").exists()]
            self.fail(f"{what}: processes left in the namespaces {limit} s after mpirun: "
                      f"{list(zip(left, names))}")
            for p in left:
                kill(p)
            return False
        return True

    def matches_single_host(self, n):
        what = f"mpirun --hostfile, {n} ranks on 2 hosts"
        ref = self.work / f"single-{n}"
        rc, text = self.run(["mpirun", "-n", str(n), "--oversubscribe", "--bind-to", "none"]
                            + self.train_args(ref))
        if rc != 0:
            return self.fail(f"{what}: the single-host run exited {rc}:\n{text[-3000:]}")
        out = self.work / f"two-{n}"
        cmd, status = self.two_host_mpirun(n, f"two-{n}")
        rc, text = self.run(cmd + self.train_args(out))
        if rc != 0:
            return self.fail(f"{what}: exited {rc}:\n{text[-3000:]}")
        placed = [(status / f"rank{r}.ns").read_text().strip() for r in range(n)]
        per_host = n // 2
        expected = [self.hosts.ns["a"]] * per_host + [self.hosts.ns["b"]] * per_host
        if placed != expected:
            return self.fail(f"{what}: ranks ran in {placed}, expected {expected}")
        a, b = metrics(ref), metrics(out)
        if len(a) != STEPS or a != b:
            return self.fail(f"{what}: metrics differ from the single-host run:\n{a}\n{b}")
        if (ref / "model/model.safetensors").read_bytes() != \
                (out / "model/model.safetensors").read_bytes():
            return self.fail(f"{what}: final weights differ from the single-host run")
        self.figures[f"losses_bitwise_{n}_ranks"] = [a[s][0] for s in sorted(a)]
        if self.nothing_left(what):
            self.ok(f"{what}: ranks on {placed}; {STEPS} losses, gradient norms and the final "
                    f"weights equal the single-host run bitwise")

    def cut_mid_run(self, name, what, comm_timeout_s, limit):
        """Takes the link down after step 3 of a long 2-host run; (mpirun's exit code, output,
        seconds from the cut to mpirun's exit, steps done, rank status dir), or None."""
        out = self.work / name
        cmd, status = self.two_host_mpirun(
            2, name, ["-x", f"ZEROTRAIN_COMM_TIMEOUT={comm_timeout_s}"])
        p = subprocess.Popen(cmd + self.train_args(out, steps=100000), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env=self.env,
                             start_new_session=True)
        t_start = time.time()
        while len(metrics(out)) < 3 and p.poll() is None and time.time() - t_start < 60:
            time.sleep(0.05)
        if p.poll() is not None or len(metrics(out)) < 3:
            p.kill()
            return self.fail(f"{what}: the run never reached step 3:\n{p.communicate()[0][-3000:]}")
        self.hosts.set_link("down")
        t_down = time.time()
        step_down = len(metrics(out))
        try:
            text, _ = p.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            text = p.communicate()[0]
            self.fail(f"{what}: mpirun still ran {limit} s after the link went down")
        mpirun_s = time.time() - t_down
        if p.returncode == 0:
            self.fail(f"{what}: mpirun exited 0")
        self.nothing_left(what)
        self.hosts.set_link("up")
        return p.returncode, text, mpirun_s, step_down, status, t_down

    def link_down_rank_timeout(self):
        """The ranks' collective timeout ends them before OpenMPI notices the lost node."""
        what = "link down mid-run, the ranks' timeout first"
        self.hosts.set_tcp_retries2(TCP_RETRIES2_FAST)
        failures_before = len(self.failures)
        cut = self.cut_mid_run("down", what, COMM_TIMEOUT_S, COMM_TIMEOUT_S + 40)
        self.hosts.set_tcp_retries2(TCP_RETRIES2_DEFAULT)
        if cut is None:
            return
        code, text, mpirun_s, step_down, status, t_down = cut
        ns = {r: (status / f"rank{r}.ns").read_text().strip() for r in range(2)}
        exits = {}
        for r in range(2):
            peer = 1 - r
            rc_file = status / f"rank{r}.rc"
            if not rc_file.exists():
                self.fail(f"{what}: rank {r} recorded no exit (killed?)")
                continue
            rank_code, when = rc_file.read_text().split()
            exits[r] = float(when) - t_down
            if int(rank_code) == 0:
                self.fail(f"{what}: rank {r} exited 0")
            if exits[r] > COMM_TIMEOUT_S + EXIT_MARGIN_S:
                self.fail(f"{what}: rank {r} exited {exits[r]:.1f} s after the link went "
                               f"down (timeout {COMM_TIMEOUT_S} s)")
            err = (self.work / f"down.output/1/rank.{r}/stderr")
            err = err.read_text() if err.exists() else ""
            line = re.search(rf"\[comm\] .* did not complete in {COMM_TIMEOUT_S} s \(rank {r} on "
                             rf"{ns[r]} still waits for rank {peer} on {ns[peer]}: .*", err)
            if not line:
                self.fail(f"{what}: rank {r}'s stderr does not name rank {peer} on "
                               f"{ns[peer]}:\n{err[-2000:]}")
            else:
                print(f"     rank {r}: {line.group(0)}", flush=True)
        if len(self.failures) == failures_before:
            self.figures["link_down"] = {
                "comm_timeout_s": COMM_TIMEOUT_S, "steps_done_at_link_down": step_down,
                "rank_exit_s": {str(r): round(s, 2) for r, s in exits.items()},
                "mpirun_exit_s": round(mpirun_s, 2), "mpirun_exit_code": code,
                "tcp_retries2": TCP_RETRIES2_FAST}
            self.ok(f"{what} after step {step_down}: ranks exited in "
                    f"{', '.join(f'{s:.1f}' for s in exits.values())} s naming each other's "
                    f"host, mpirun exited {code} in {mpirun_s:.1f} s, nothing left")

    def link_down_daemon_keepalive(self):
        """A long collective timeout: OpenMPI's daemons notice the lost node first (keepalive on
        their idle connections, the kernel's default tcp_retries2) and end the job whole."""
        what = "link down mid-run, OpenMPI's keepalive first"
        failures_before = len(self.failures)
        cut = self.cut_mid_run("down-keepalive", what, 120, 60)
        if cut is None:
            return
        code, text, mpirun_s, step_down, status, t_down = cut
        if not re.search(rf"ORTE has lost communication with a remote daemon\.[\s\S]*Remote "
                         rf"daemon: \[\[\d+,0\],1\] on node {re.escape(NET)}\.2", text):
            self.fail(f"{what}: mpirun's output does not name the lost node {NET}.2:\n"
                      f"{text[-3000:]}")
        for r in range(2):
            rc_file = status / f"rank{r}.rc"
            if rc_file.exists() and int(rc_file.read_text().split()[0]) == 0:
                self.fail(f"{what}: rank {r} exited 0")
        if len(self.failures) == failures_before:
            self.figures["link_down_keepalive"] = {
                "comm_timeout_s": 120, "steps_done_at_link_down": step_down,
                "mpirun_exit_s": round(mpirun_s, 2), "mpirun_exit_code": code}
            self.ok(f"{what} after step {step_down}: mpirun named node {NET}.2 and exited {code} "
                    f"in {mpirun_s:.1f} s, the ranks were ended, nothing left")

    def torchrun_style(self):
        what = "torchrun-style, 2 ranks on 2 hosts"
        port = 29500 + os.getpid() % 1000
        # The timeout also bounds joining one MPI world (ompi-server, connect/accept): 30 s was
        # once too short on a 2-core machine busy with a sanitizer build beside ctest.
        base = dict(WORLD_SIZE="2", MASTER_ADDR=self.hosts.ip["a"], MASTER_PORT=str(port),
                    ZEROTRAIN_COMM_TIMEOUT="120")
        rendezvous = [self.tests_binary, "--gtest_also_run_disabled_tests",
                      "--gtest_filter=TcpRendezvous.DISABLED_RanksStartedTorchrunStyleMeet"]
        texts = self.on_both_hosts(rendezvous, base)
        for r, (rc, text) in enumerate(texts):
            if rc != 0 or f'[rendezvous] rank {r} of 2 received "rank 0 of 2 at {NET}.1"' not in text \
                    or f"[mpi world] rank {r} of 2: all_reduce 3 30" not in text:
                return self.fail(f"{what}: rank {r} of the rendezvous exited {rc}:\n{text[-3000:]}")
        self.ok(f"{what}: both ranks met at {NET}.1:{port}, joined one MPI world and all-reduced")
        ref, out = self.work / "single-2", self.work / "torchrun"
        if not metrics(ref):
            return self.fail(f"{what}: no single-host run to compare with")
        texts = self.on_both_hosts(self.train_args(out), base)
        for r, (rc, text) in enumerate(texts):
            if rc != 0:
                return self.fail(f"{what}: CPU training on rank {r} exited {rc}:\n{text[-3000:]}")
        a, b = metrics(ref), metrics(out)
        if len(a) != STEPS or a != b:
            return self.fail(f"{what}: metrics differ from the single-host mpirun run:\n{a}\n{b}")
        if (ref / "model/model.safetensors").read_bytes() != \
                (out / "model/model.safetensors").read_bytes():
            return self.fail(f"{what}: final weights differ from the single-host mpirun run")
        if self.nothing_left(what):
            self.ok(f"{what}: CPU training equals the single-host mpirun run bitwise ({STEPS} "
                    f"losses, gradient norms, final weights); nothing left (ompi-server included)")

    def link_down_torchrun_style(self):
        """Ranks started torchrun-style, one per host, each with its own MPI job: the cut ends
        each at its own collective deadline, naming the other rank and its host."""
        what = "link down mid-run, torchrun-style"
        port = 29500 + os.getpid() % 1000 + 1
        out = self.work / "down-torchrun"
        status = self.work / "down-torchrun.status"
        status.mkdir()
        env = dict(WORLD_SIZE="2", MASTER_ADDR=self.hosts.ip["a"], MASTER_PORT=str(port),
                   ZEROTRAIN_COMM_TIMEOUT=str(COMM_TIMEOUT_S), ZT_RANK_STATUS_DIR=str(status))
        procs = self.start_on_both_hosts([RANK_STATUS] + self.train_args(out, steps=100000), env)
        t_start = time.time()
        while len(metrics(out)) < 3 and time.time() - t_start < 60 and \
                all(p.poll() is None for p in procs):
            time.sleep(0.05)
        if len(metrics(out)) < 3:
            for p in procs:
                os.killpg(p.pid, signal.SIGKILL)
            return self.fail(f"{what}: the run never reached step 3:\n"
                             f"{procs[0].communicate()[0][-3000:]}")
        self.hosts.set_link("down")
        t_down = time.time()
        failures_before = len(self.failures)
        step_down = len(metrics(out))
        texts = []
        for p in procs:
            try:
                texts.append(p.communicate(timeout=COMM_TIMEOUT_S + 30)[0])
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                texts.append(p.communicate()[0])
                self.fail(f"{what}: a rank still ran {COMM_TIMEOUT_S + 30} s after the cut")
        self.nothing_left(what)
        self.hosts.set_link("up")
        exits = {}
        for r in range(2):
            peer, ns = 1 - r, self.hosts.ns
            rc_file = status / f"rank{r}.rc"
            if not rc_file.exists():
                self.fail(f"{what}: rank {r} recorded no exit:\n{texts[r][-2000:]}")
                continue
            rank_code, when = rc_file.read_text().split()
            exits[r] = float(when) - t_down
            if int(rank_code) == 0 or exits[r] > COMM_TIMEOUT_S + EXIT_MARGIN_S:
                self.fail(f"{what}: rank {r} exited {rank_code} {exits[r]:.1f} s after the cut")
            host, peer_host = ns["ab"[r]], ns["ab"[peer]]
            if not re.search(rf"\[comm\] .* did not complete in {COMM_TIMEOUT_S} s \(rank {r} on "
                             rf"{host} still waits for rank {peer} on {peer_host}: ", texts[r]):
                self.fail(f"{what}: rank {r} does not name rank {peer} on {peer_host}:\n"
                          f"{texts[r][-2000:]}")
        if len(self.failures) == failures_before:
            self.figures["link_down_torchrun_style"] = {
                "comm_timeout_s": COMM_TIMEOUT_S, "steps_done_at_link_down": step_down,
                "rank_exit_s": {str(r): round(s, 2) for r, s in exits.items()}}
            self.ok(f"{what} after step {step_down}: ranks exited in "
                    f"{', '.join(f'{s:.1f}' for s in exits.values())} s naming each other's "
                    f"host, nothing left")

    def start_on_both_hosts(self, cmd, env):
        procs = []
        for r, h in enumerate("ab"):
            e = dict(self.env, RANK=str(r), LOCAL_RANK="0", LOCAL_WORLD_SIZE="1", **env)
            procs.append(subprocess.Popen(self.hosts.exec_as(h) + [str(c) for c in cmd],
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                          text=True, env=e, start_new_session=True))
        return procs

    def on_both_hosts(self, cmd, env):
        procs = self.start_on_both_hosts(cmd, env)
        out = []
        for p in procs:
            try:
                out.append((p.communicate(timeout=60)[0], p.returncode)[::-1])
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out.append((-9, "(killed after 60 s)\n" + p.communicate()[0]))
        return out


def metrics(out):
    """step -> (loss, grad_norm) as written: bitwise comparable."""
    path = out / "metrics.jsonl"
    if not path.exists():
        return {}
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a line being written
    return {j["step"]: (j["loss"], j["grad_norm"]) for j in rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zerotrain", required=True)
    ap.add_argument("--tests-binary", required=True, help="zerotrain_tests (the rendezvous case)")
    ap.add_argument("--work", required=True)
    ap.add_argument("--json", help="write the measured figures here")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that the namespaces go
    try:
        check_can_run()
        with Hosts() as hosts:
            t0 = time.time()
            r = Rehearsal(args, hosts)
            r.matches_single_host(2)
            r.matches_single_host(4)
            r.torchrun_style()
            r.link_down_torchrun_style()
            r.link_down_rank_timeout()
            r.link_down_daemon_keepalive()
            r.figures["seconds"] = round(time.time() - t0, 1)
    except Skip as e:
        print(f"SKIP two_hosts: {e}", flush=True)
        return SKIP
    print(json.dumps(r.figures, indent=1))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(r.figures, indent=1) + "\n")
    if r.failures:
        print(f"{len(r.failures)} failure(s)", flush=True)
        return 1
    print("two_hosts: all passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
