"""NetTuning from a Python program under the real `pulumi` CLI (tests/cli/python.test.ts).

The pulumi Python SDK from PyPI (the CLI's version, in the toolchain's venv) runs the program through Automation API's
inline-program server, which the CLI reaches with --client (pulumi-language-python is not served by the Go module
proxy). The component is constructed remotely (remote=True), served by this package's component provider, which the
test attaches with PULUMI_DEBUG_PROVIDERS. No generated SDK: the type token and the property names are the schema's.

Usage: program.py preview|up|destroy   (environment: see the test). Prints the CLI's output, then one JSON line
"RESULT {...}" with the outputs of an up.
"""
import json
import os
import sys

import pulumi
from pulumi import automation as auto


class NetTuning(pulumi.ComponentResource):
    """net-tuning:index:NetTuning, constructed by the package's component provider."""

    def __init__(self, name, args, opts=None):
        props = dict(args)
        props["applied"] = None  # outputs the engine fills in
        props["previous"] = None
        super().__init__("net-tuning:index:NetTuning", name, props, opts, remote=True)


def program():
    cfg = pulumi.Config()
    connection = {
        "host": cfg.require("host"),
        "port": cfg.require_int("port"),
        "user": "root",
        "privateKey": cfg.require_secret("privateKey"),
    }
    tuning = NetTuning("web", {"connection": connection, "sysctls": json.loads(cfg.require("sysctls"))})
    pulumi.export("applied", tuning.applied)
    pulumi.export("previous", tuning.previous)


def main(op):
    env = os.environ
    opts = auto.LocalWorkspaceOptions(
        work_dir=env["NT_PY_DIR"],
        pulumi_home=env["PULUMI_HOME"],
        pulumi_command=auto.PulumiCommand(root=env["NT_PULUMI_ROOT"], skip_version_check=True),
        project_settings=auto.ProjectSettings(
            name="ntpy", runtime="python", backend=auto.ProjectBackend(url=env["PULUMI_BACKEND_URL"])
        ),
        secrets_provider="passphrase",
    )
    stack = auto.create_or_select_stack(stack_name="test", project_name="ntpy", program=program, opts=opts)
    stack.set_config("host", auto.ConfigValue(env["NT_HOST"]))
    stack.set_config("port", auto.ConfigValue(env["NT_PORT"]))
    stack.set_config("sysctls", auto.ConfigValue(env["NT_SYSCTLS"]))
    with open(env["NT_KEY_FILE"], encoding="utf-8") as f:
        stack.set_config("privateKey", auto.ConfigValue(f.read(), secret=True))
    if op == "preview":
        r = stack.preview(diff=True, color="never")
        print(r.stdout)
        print(r.stderr)  # the diagnostics (the live read's "live → declared" lines)
        print("RESULT " + json.dumps({"changes": r.change_summary}))
    elif op == "up":
        r = stack.up(color="never")
        print(r.stdout)
        print(r.stderr)
        print("RESULT " + json.dumps({k: v.value for k, v in r.outputs.items()}))
    elif op == "destroy":
        r = stack.destroy(color="never")
        print(r.stdout)
        print("RESULT " + json.dumps({"summary": r.summary.resource_changes}))
    else:
        raise SystemExit(f"usage: program.py preview|up|destroy (got {op!r})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
