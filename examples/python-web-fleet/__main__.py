"""Scenario B in Python: a fleet of high-concurrency web servers, each tuned with the webServer profile.

The same program as examples/web-fleet (TypeScript), through the generated SDK:

    pulumi package add github.com/pulumi-net-tuning/pulumi-net-tuning@v0.3.0   # or a clone: pulumi package add <its path>
    pulumi config set --path 'servers[0]' 203.0.113.21
    pulumi config set --secret privateKey "$(cat ~/.ssh/id_ed25519)"
    pulumi preview --diff && pulumi up

Profiles are declarative here (the TypeScript helpers such as webServer() exist only in TypeScript): the component
resolves {"name": "webServer", "memory": "64GiB"} to exactly the profile webServer({ memory: "64GiB" }) returns.
"""
import pulumi
import pulumi_net_tuning as net_tuning

config = pulumi.Config()
addresses = config.require_object("servers")
port = config.get_int("port") or 22
user = config.get("user") or "root"
private_key = config.require_secret("privateKey")
memory = config.get("memory")

profile = {"name": "webServer"}
if memory:
    profile["memory"] = memory

applied = {}
warnings = []
for i, address in enumerate(addresses):
    name = f"web-{i + 1}"
    tuning = net_tuning.NetTuning(
        f"{name}-tuning",
        connection={"host": address, "port": port, "user": user, "private_key": private_key},
        become=net_tuning.Become.SUDO if user != "root" else None,
        profile=profile,
    )
    applied[name] = tuning.applied
    warnings.append(tuning.warnings)

pulumi.export("applied", applied)
pulumi.export("warnings", warnings[0] if warnings else [])
