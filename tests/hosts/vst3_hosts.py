#!/usr/bin/env python3
"""Dyeflow's VST3 in two third-party Python hosts: pedalboard and DawDreamer.

Usage:
    python vst3_hosts.py path/to/Dyeflow.vst3 [--hosts pedalboard,dawdreamer]
                         [--render-seconds 60] [--idle-seconds 5]

`cargo test --test it hosts::` runs it on this build's plugin (see tests/it/hosts.rs).

For each host that is installed, in a child process of its own (so that a crash in one
host is reported as such and does not hide the other):

  a. load the VST3, report its parameters and the load time;
  b. unity passthrough: deterministic noise in, the same bits out (stereo and mono);
  c. state round trip: the documented parameter/state behaviour (see STATE_* below);
  d. a burst of 200 MIDI notes within one second while audio passes: output bit-exact;
  e. every parameter at normalized 0, 1 and 0.5 while audio runs: output bit-exact;
  f. an offline render (48 kHz stereo, blocks of 512) with notes, timed;
  g. the bounce capture that render left (when DYEFLOW_CAPTURE_DIR is set): one capture of the
     render's length, its cause (the host said offline, or its pace showed the bounce), and
     every note of the render in it;
and then (unless --idle-seconds 0), in one more child process per host, the host process's
CPU use while idle after loading the plugin and one short process call.

pedalboard takes about 30 s to load the plugin (its wrapper probes the text of each of the
2 100 parameters, 2 080 of them nice-plug's hidden MIDI CC parameters), so the checks load as
few instances as they can.

Every check prints one line: PASS, FAIL, N/A (the host cannot do it, with the reason) or
INFO. The exit status is non-zero if any check fails, a host crashes, or no host ran.

Dyeflow passes audio through untouched except that subnormal samples become zeros of the
same sign; the noise used here contains no subnormals, so the output must equal the input
bit for bit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SAMPLE_RATE = 48_000
BLOCK = 512
SEED = 0x0D7EF10

# Dyeflow's parameters, in the plugin's order. tests/it/hosts.rs passes the list from the plugin's
# own parameter map (DYEFLOW_EXPECTED_PARAMETERS, one name per line); run by hand, the script
# falls back on this copy.
_FROM_THE_TEST = os.environ.get("DYEFLOW_EXPECTED_PARAMETERS")
EXPECTED_PARAMETERS = _FROM_THE_TEST.split("\n") if _FROM_THE_TEST else [
    "Bypass", "Viscosity", "Dye diffusion", "Velocity dissipation", "Dye dissipation",
    "Vorticity", "Pressure iterations", "Speed", "Splat radius", "Splat force", "Dye amount",
    "Audio reactivity", "Envelope attack", "Envelope release", "Note mapping", "Beat pulse",
    "Drum channel", "Colour mode", "Brightness", "Saturation", "Hue shift", "Display",
]

# nice-plug's VST3 wrapper adds 16 x 130 hidden, read-only parameters ("MIDI Ch. 1 CC 0" ...)
# that carry MIDI CCs, pitch bend and channel pressure. They are not Dyeflow's parameters.
MIDI_PARAMETER_PREFIX = "MIDI Ch. "

# Known limitation of the nice-plug VST3 wrapper: while processing is on, the controller's
# setParamNormalized is ignored and only a process() call carrying IParameterChanges applies
# a value. A value set and saved with no process call in between is therefore not in the
# saved state; a process call in between makes the state carry every value.
STATE_RESTORED_WITHOUT_PROCESS = 0  # (i): of the parameters set, how many a fresh instance gets
# (ii) must restore every parameter that was set.

TOLERANCE = 1e-4  # normalized units, for reading parameter values back


class HostLimitation(Exception):
    """The host cannot do what a check asks (reported as N/A, not as a failure)."""


# --------------------------------------------------------------------------------------------
# Signals


def noise(channels: int, frames: int, seed: int) -> np.ndarray:
    """Deterministic white noise in [-0.5, 0.5), float32, with no subnormal samples."""
    x = np.random.default_rng(seed).uniform(-0.5, 0.5, (channels, frames)).astype(np.float32)
    x[np.abs(x) < np.finfo(np.float32).tiny] = 0.0
    return x


def random_notes(count: int, span_s: float, seed: int, max_len_s: float):
    """`count` notes (key, velocity, start s, length s), all ending before `span_s`."""
    rng = np.random.default_rng(seed)
    notes = []
    for _ in range(count):
        length = float(rng.uniform(0.005, max_len_s))
        start = float(rng.uniform(0.0, span_s - length - 1e-3))
        notes.append((int(rng.integers(0, 128)), int(rng.integers(1, 128)), start, length))
    return notes


def bit_exact(out: np.ndarray, ref: np.ndarray, what: str) -> str:
    """Assert `out` is `ref` bit for bit (and finite); return a short description."""
    assert out.dtype == np.float32, f"{what}: output dtype {out.dtype}, expected float32"
    assert out.shape == ref.shape, f"{what}: output shape {out.shape}, expected {ref.shape}"
    non_finite = int(np.count_nonzero(~np.isfinite(out)))
    assert non_finite == 0, f"{what}: {non_finite} NaN/inf samples in the output"
    differing = int(np.count_nonzero(out.view(np.uint32) != ref.view(np.uint32)))
    if differing or not np.array_equal(out, ref):
        max_diff = float(np.max(np.abs(out.astype(np.float64) - ref.astype(np.float64))))
        raise AssertionError(
            f"{what}: {differing} of {out.size} samples differ (max |diff| {max_diff:.3g})"
        )
    return f"{ref.shape[0]} ch x {ref.shape[1]} frames bit-exact, no NaN/inf"


def frames_for(seconds: float) -> int:
    """Whole blocks covering `seconds`, so every host renders exactly that many frames."""
    return int(np.ceil(seconds * SAMPLE_RATE / BLOCK)) * BLOCK


# --------------------------------------------------------------------------------------------
# Host adapters: the same small interface over pedalboard and DawDreamer.


class PedalboardHost:
    name = "pedalboard"

    def __init__(self, plugin_path: str):
        import pedalboard

        self.pedalboard = pedalboard
        self.version = pedalboard.__version__
        self.path = plugin_path

    def load(self):
        return self.pedalboard.load_plugin(self.path)

    def parameters(self, inst):
        """All parameters as (index, name, default normalized value, step count)."""
        # The native list: pedalboard's Python-side `.parameters` dict probes every parameter's
        # text at 1001 points, which takes tens of seconds with 2100 parameters.
        return [(p.index, p.name, p.default_raw_value, p.num_steps) for p in inst._parameters]

    def set_param(self, inst, index: int, value: float):
        inst._parameters[index].raw_value = value

    def get_param(self, inst, index: int) -> float:
        return inst._parameters[index].raw_value

    def process(self, inst, audio: np.ndarray, notes=None) -> np.ndarray:
        if notes:
            try:  # the only MIDI entry point pedalboard has
                messages = [(bytes([0x90, k, v]), s) for k, v, s, _ in notes]
                inst.process(messages, audio.shape[1] / SAMPLE_RATE, SAMPLE_RATE,
                             num_channels=audio.shape[0], buffer_size=BLOCK, reset=False)
            except ValueError as e:
                raise HostLimitation(f"cannot send MIDI to an effect plugin ({e})") from None
            raise AssertionError("pedalboard accepted MIDI for an effect: update this test")
        return inst.process(audio, SAMPLE_RATE, buffer_size=BLOCK, reset=False)

    def save_state(self, inst) -> bytes:
        return bytes(inst.raw_state)

    def load_state(self, inst, state: bytes):
        inst.raw_state = state


class DawDreamerInstance:
    """A RenderEngine with a playback processor feeding the plugin."""

    def __init__(self, daw, path: str):
        self.engine = daw.RenderEngine(SAMPLE_RATE, BLOCK)
        self.plugin = self.engine.make_plugin_processor("dyeflow", path)
        self.playback = self.engine.make_playback_processor(
            "input", np.zeros((2, BLOCK), np.float32))
        self.engine.load_graph([(self.playback, []), (self.plugin, ["input"])])
        self.channels = 2


class DawDreamerHost:
    name = "dawdreamer"

    def __init__(self, plugin_path: str):
        import dawdreamer

        self.daw = dawdreamer
        self.version = dawdreamer.__version__
        self.path = plugin_path
        self.tmp = tempfile.TemporaryDirectory(prefix="dyeflow-hosts-")

    def load(self):
        return DawDreamerInstance(self.daw, self.path)

    def parameters(self, inst):
        return [(d["index"], d["name"], d["defaultValue"], d["numSteps"])
                for d in inst.plugin.get_parameters_description()]

    def set_param(self, inst, index: int, value: float):
        assert inst.plugin.set_parameter(index, value), f"set_parameter({index}) refused"

    def get_param(self, inst, index: int) -> float:
        return inst.plugin.get_parameter(index)

    def process(self, inst, audio: np.ndarray, notes=None) -> np.ndarray:
        channels, frames = audio.shape
        if channels != inst.channels:
            try:
                accepted = inst.plugin.set_bus(channels, channels)
            except ValueError as e:
                accepted, why = False, str(e)
            else:
                why = "set_bus returned False"
            if not accepted:
                raise HostLimitation(
                    f"host refused set_bus({channels}, {channels}) on an instance already "
                    f"switched to {inst.channels} channel(s) ({why})")
            inst.channels = channels
        inst.playback.set_data(audio)
        inst.plugin.clear_midi()
        for key, velocity, start, length in notes or []:
            inst.plugin.add_midi_note(key, velocity, start, length)
        if notes:
            expected = 2 * len(notes)
            assert inst.plugin.n_midi_events == expected, (
                f"host holds {inst.plugin.n_midi_events} MIDI events, expected {expected}")
        assert inst.engine.render(frames / SAMPLE_RATE), "render() returned False"
        return inst.engine.get_audio()

    def save_state(self, inst) -> bytes:
        path = os.path.join(self.tmp.name, "state.bin")
        inst.plugin.save_state(path)
        return Path(path).read_bytes()

    def load_state(self, inst, state: bytes):
        path = os.path.join(self.tmp.name, "load.bin")
        Path(path).write_bytes(state)
        inst.plugin.load_state(path)


HOSTS = {"pedalboard": PedalboardHost, "dawdreamer": DawDreamerHost}


# --------------------------------------------------------------------------------------------
# The checks, run in a worker process per host.


class Checks:
    def __init__(self, host_name: str):
        self.host = host_name
        self.counts = {"PASS": 0, "FAIL": 0, "N/A": 0}

    def line(self, status: str, label: str, text: str):
        print(f"[{status:<4}] {self.host:<10} {label}: {text}", flush=True)

    def run(self, label: str, fn) -> bool:
        try:
            text = fn()
        except HostLimitation as e:
            self.counts["N/A"] += 1
            self.line("N/A", label, str(e))
            return True
        except AssertionError as e:
            self.counts["FAIL"] += 1
            self.line("FAIL", label, str(e))
            return False
        except Exception as e:  # noqa: BLE001 - any host error is a failed check
            self.counts["FAIL"] += 1
            self.line("FAIL", label, f"{type(e).__name__}: {e}")
            return False
        self.counts["PASS"] += 1
        self.line("PASS", label, text)
        return True


def state_targets(params):
    """A non-default normalized value for each parameter (on the step grid if stepped)."""
    targets = {}
    for index, _name, default, steps in params:
        if steps < 1000:  # bool, choice or integer: the step furthest from the default
            targets[index] = 1.0 if default < 0.5 else 0.0
        else:
            targets[index] = 0.75 if default < 0.5 else 0.125
    return targets


def run_host_checks(host, render_seconds: float) -> Checks:
    checks = Checks(host.name)
    state = {}

    def a_load():
        wall, cpu = time.perf_counter(), time.process_time()
        inst = host.load()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        params = host.parameters(inst)
        ours = [p for p in params if not p[1].startswith(MIDI_PARAMETER_PREFIX)]
        names = [p[1] for p in ours]
        state.update(inst=inst, ours=ours)
        assert names == EXPECTED_PARAMETERS, f"parameters {names}, expected {EXPECTED_PARAMETERS}"
        return (f"loaded in {wall:.2f} s wall / {cpu:.2f} s CPU; {len(params)} parameters, "
                f"{len(ours)} of them Dyeflow's ({len(params) - len(ours)} wrapper MIDI CC): "
                + ", ".join(names))

    if not checks.run("a. load + parameters", a_load):
        return checks
    inst, ours = state["inst"], state["ours"]

    def b_passthrough(channels):
        def check():
            x = noise(channels, frames_for(1.0), SEED + channels)
            wall = time.perf_counter()
            out = host.process(inst, x)
            wall = time.perf_counter() - wall
            return f"{bit_exact(out, x, 'passthrough')} ({wall * 1e3:.1f} ms)"
        return check

    checks.run("b. passthrough stereo", b_passthrough(2))
    # The layout change goes to an instance of its own, so the stereo instance above stays
    # usable whatever the host makes of switching layouts.
    layout_inst = host.load()

    def b_mono():
        x = noise(1, frames_for(1.0), SEED + 1)
        return bit_exact(host.process(layout_inst, x), x, "mono passthrough")

    def b_back_to_stereo():
        x = noise(2, frames_for(1.0), SEED + 3)
        return "same instance, stereo after mono: " + bit_exact(
            host.process(layout_inst, x), x, "stereo after mono")

    checks.run("b. passthrough mono", b_mono)
    checks.run("b. mono then stereo", b_back_to_stereo)

    def c_state():
        targets = state_targets(ours)
        # The main (stereo) instance sets and saves, and goes back to its defaults after;
        # one fresh instance loads both states in turn.
        source = inst
        silence = np.zeros((2, BLOCK), np.float32)
        for index, value in targets.items():
            host.set_param(source, index, value)
        saved_without_process = host.save_state(source)
        host.process(source, silence)
        saved_after_process = host.save_state(source)
        for index, _name, default, _steps in ours:
            host.set_param(source, index, default)
        host.process(source, silence)
        fresh = host.load()

        def restored(saved):
            host.load_state(fresh, saved)
            got = {i: host.get_param(fresh, i) for i in targets}
            return [i for i, v in targets.items() if abs(got[i] - v) <= TOLERANCE], got

        ok_i, _ = restored(saved_without_process)
        ok_ii, got_ii = restored(saved_after_process)
        n = len(targets)
        text = (f"(i) set {n}, saved without processing: {len(ok_i)}/{n} restored; "
                f"(ii) set {n}, processed {BLOCK} samples, saved: {len(ok_ii)}/{n} restored "
                f"(states {len(saved_without_process)} / {len(saved_after_process)} bytes)")
        missing = [f"{name}={got_ii[i]:.4f}!={targets[i]:.4f}"
                   for i, name, _, _ in ours if i not in ok_ii]
        assert len(ok_ii) == n, f"{text}; not restored after processing: {', '.join(missing)}"
        assert len(ok_i) == STATE_RESTORED_WITHOUT_PROCESS, (
            f"{text}; the documented behaviour is {STATE_RESTORED_WITHOUT_PROCESS}/{n} for (i): "
            "the known limitation has changed, update the documentation and this test")
        return text + " [as documented]"

    checks.run("c. state round trip", c_state)

    def d_midi_burst():
        notes = random_notes(200, 1.0, SEED + 4, max_len_s=0.1)
        x = noise(2, frames_for(1.5), SEED + 5)
        try:
            out = host.process(inst, x, notes)
        except HostLimitation as e:
            state["midi_limitation"] = str(e)
            raise
        last_off = max(s + length for _, _, s, length in notes)
        return (f"200 notes (400 events, last note-off at {last_off:.3f} s) over "
                f"{x.shape[1]} frames: {bit_exact(out, x, 'MIDI burst')}")

    checks.run("d. 200-note MIDI burst", d_midi_burst)

    def e_extremes():
        x = noise(2, 4 * BLOCK, SEED + 6)
        settings = 0
        for index, name, _default, _steps in ours:
            for value in (0.0, 1.0, 0.5):
                host.set_param(inst, index, value)
                bit_exact(host.process(inst, x), x, f"{name} at {value}")
                settings += 1
        for index, _name, default, _steps in ours:  # leave the instance at its defaults
            host.set_param(inst, index, default)
        host.process(inst, x)
        return (f"{len(ours)} parameters x normalized (0, 1, 0.5) = {settings} settings, "
                f"each {x.shape[1]} frames of stereo noise: bit-exact, no NaN/inf")

    checks.run("e. parameter extremes", e_extremes)

    def f_render():
        frames = frames_for(render_seconds)
        seconds = frames / SAMPLE_RATE
        x = noise(2, frames, SEED + 7)
        notes = random_notes(int(8 * seconds), seconds, SEED + 8, max_len_s=0.5)
        note_text = f"{len(notes)} notes"
        if "midi_limitation" in state:
            notes, note_text = None, f"audio only, no notes: {state['midi_limitation']}"
        state["render_notes"] = len(notes or [])
        # Quiet for longer than the plugin's 3 s idle finish first: what the checks above
        # processed (the same stream, for hosts that do not restart the plugin between calls)
        # is a capture of its own, and the render starts the next.
        time.sleep(3.5)
        state["render_started"] = time.time() - 1.0
        wall, cpu = time.perf_counter(), time.process_time()
        out = host.process(inst, x, notes)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        bit_exact(out, x, "render")
        return (f"{seconds:.1f} s, {frames} frames stereo, blocks of {BLOCK}, {note_text}: "
                f"{wall:.2f} s wall ({seconds / wall:.0f}x realtime), {cpu:.2f} s process CPU "
                "(all threads), bit-exact, no NaN/inf")

    checks.run("f. offline render", f_render)

    def g_capture():
        folder = os.environ.get("DYEFLOW_CAPTURE_DIR")
        if not folder:
            raise HostLimitation("DYEFLOW_CAPTURE_DIR is not set: the capture is not checked")
        seconds = frames_for(render_seconds) / SAMPLE_RATE
        # The capture thread finishes a capture once the host has been quiet for 3 s.
        deadline = time.monotonic() + 15.0
        while True:
            found = []
            for path in Path(folder).glob("*.dyeflow-capture"):
                if path.stat().st_mtime < state["render_started"]:
                    continue
                lines = path.read_text().splitlines()
                header, end = json.loads(lines[0]), json.loads(lines[-1])["end"]
                length = end["stop"] - header["start_s"]
                if abs(length - seconds) < 0.05:
                    notes = sum(1 for line in lines if '"NoteOn"' in line)
                    found.append((path.name, length, header.get("cause"), notes))
            if found or time.monotonic() > deadline:
                break
            time.sleep(0.25)
        assert len(found) == 1, f"one capture of the {seconds:.1f} s render, found {found}"
        name, length, cause, notes = found[0]
        assert cause in ("offline", "pace"), f"cause {cause!r}"
        sent = state.get("render_notes", 0)
        assert notes == sent, f"{notes} notes in the capture, {sent} sent"
        return f"{name}: {length:.2f} s, cause {cause}, {notes} notes"

    checks.run("g. bounce capture", g_capture)
    return checks


def idle_probe(host, idle_seconds: float) -> dict:
    """Load, process one block, then measure this process's CPU time while it sleeps."""
    inst = host.load()
    x = noise(2, BLOCK, SEED + 9)
    bit_exact(host.process(inst, x), x, "idle probe block")
    windows = []
    for _ in range(2):
        cpu, wall = time.process_time(), time.perf_counter()
        time.sleep(idle_seconds)
        windows.append(100.0 * (time.process_time() - cpu) / (time.perf_counter() - wall))
    threads = next((line.split()[1] for line in Path("/proc/self/status").read_text().splitlines()
                    if line.startswith("Threads:")), "?")
    return {"windows": windows, "threads": threads}


# --------------------------------------------------------------------------------------------
# The parent: one child process per host (and per idle probe), summary, exit status.


def run_child(args: list[str]) -> tuple[int, dict | None]:
    """Run this script in a child; echo its lines; return its exit code and RESULT payload."""
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), *args],
                             stdout=subprocess.PIPE, text=True)
    payload = None
    for line in child.stdout:
        if line.startswith("RESULT "):
            payload = json.loads(line[len("RESULT "):])
        else:
            print(line, end="", flush=True)
    return child.wait(), payload


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("plugin", help="path of Dyeflow.vst3")
    parser.add_argument("--hosts", default="pedalboard,dawdreamer")
    parser.add_argument("--render-seconds", type=float, default=60.0)
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    parser.add_argument("--worker", choices=HOSTS, help=argparse.SUPPRESS)
    parser.add_argument("--idle-probe", choices=HOSTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    plugin = os.path.abspath(args.plugin)

    if args.worker:
        checks = run_host_checks(HOSTS[args.worker](plugin), args.render_seconds)
        print("RESULT " + json.dumps(checks.counts), flush=True)
        return 1 if checks.counts["FAIL"] or not checks.counts["PASS"] else 0
    if args.idle_probe:
        print("RESULT " + json.dumps(idle_probe(HOSTS[args.idle_probe](plugin),
                                                args.idle_seconds)), flush=True)
        return 0

    binary = next(Path(plugin).glob("Contents/*-linux/*.so"), None) or Path(plugin)
    digest = hashlib.sha256(binary.read_bytes()).hexdigest()[:16] if binary.is_file() else "?"
    print(f"plugin {plugin} (binary sha256 {digest}...)")
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.platform()}")

    totals = {"PASS": 0, "FAIL": 0, "N/A": 0}
    hosts_run = 0
    for name in [h.strip() for h in args.hosts.split(",") if h.strip()]:
        try:
            version = HOSTS[name](plugin).version
        except ImportError as e:
            print(f"[N/A ] {name:<10} host not installed ({e})")
            totals["N/A"] += 1
            continue
        print(f"--- {name} {version}", flush=True)
        hosts_run += 1
        rc, counts = run_child(["--worker", name, plugin,
                                "--render-seconds", str(args.render_seconds)])
        if counts is None:
            how = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
            print(f"[FAIL] {name:<10} worker: host process died ({how}) before finishing")
            totals["FAIL"] += 1
        else:
            for key in totals:
                totals[key] += counts[key]
        if args.idle_seconds <= 0:
            continue
        rc, idle = run_child(["--idle-probe", name, plugin,
                              "--idle-seconds", str(args.idle_seconds)])
        if idle is None:
            print(f"[FAIL] {name:<10} idle CPU: probe process died (exit status {rc})")
            totals["FAIL"] += 1
        else:
            first, second = idle["windows"]
            print(f"[INFO] {name:<10} idle CPU after load + one {BLOCK}-frame process call: "
                  f"{first:.1f} % of a core over the first {args.idle_seconds:g} s, "
                  f"{second:.1f} % over the next {args.idle_seconds:g} s "
                  f"({idle['threads']} threads in the host process)", flush=True)

    print(f"hosts_test: {totals['PASS']} passed, {totals['FAIL']} failed, "
          f"{totals['N/A']} not applicable, {hosts_run} host(s)")
    return 1 if totals["FAIL"] or hosts_run == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
