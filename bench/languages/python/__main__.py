"""NetTuning from Python through `pulumi package add` (bench/languages.ts, `npm run bench:languages`).

Run by the real pulumi-language-python; `pulumi_net_tuning` is the SDK that `pulumi package add <clone of this
repository>` generated into sdks/ and pip-installed into the project's venv. Config: host, port, privateKey (secret),
sysctls (JSON), fileName.
"""
import json

import pulumi
import pulumi_net_tuning as net_tuning

cfg = pulumi.Config()
tuning = net_tuning.NetTuning(
    "web",
    connection=net_tuning.ConnectionArgsArgs(
        host=cfg.require("host"),
        port=cfg.require_int("port"),
        user="root",
        private_key=cfg.require_secret("privateKey"),
    ),
    sysctls=json.loads(cfg.require("sysctls")),
    file_name=cfg.require("fileName"),
)
pulumi.export("applied", tuning.applied)
pulumi.export("previous", tuning.previous)
