// NetTuning from Go through `pulumi package add` (bench/languages.ts, `npm run bench:languages`).
//
// Run by the real pulumi-language-go; the nettuning package is the SDK that `pulumi package add <clone of this
// repository>` generated into sdks/net-tuning (module example.com/pulumi-net-tuning/sdk/go, the schema names no Go
// import path) and linked with a replace directive in go.mod. Config: host, port, privateKey (secret), sysctls (JSON),
// fileName.
package main

import (
	"encoding/json"

	"example.com/pulumi-net-tuning/sdk/go/nettuning"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		cfg := config.New(ctx, "")
		var sysctls map[string]interface{}
		if err := json.Unmarshal([]byte(cfg.Require("sysctls")), &sysctls); err != nil {
			return err
		}
		tuning, err := nettuning.NewNetTuning(ctx, "web", &nettuning.NetTuningArgs{
			Connection: nettuning.ConnectionArgsArgs{
				Host:       pulumi.String(cfg.Require("host")),
				Port:       pulumi.Float64(float64(cfg.RequireInt("port"))),
				User:       pulumi.String("root"),
				PrivateKey: cfg.RequireSecret("privateKey"),
			},
			Sysctls:  pulumi.ToMap(sysctls),
			FileName: pulumi.String(cfg.Require("fileName")),
		})
		if err != nil {
			return err
		}
		ctx.Export("applied", tuning.Applied)
		ctx.Export("previous", tuning.Previous)
		return nil
	})
}
