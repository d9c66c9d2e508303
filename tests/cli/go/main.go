// NetTuning from a Go program under the real `pulumi` CLI (tests/cli/go.test.ts).
//
// The Go SDK (github.com/pulumi/pulumi/sdk/v3 at the CLI's version, from the Go module proxy) runs the program through
// Automation API's inline-program server, which the CLI reaches with --client (pulumi-language-go is not served by the
// Go module proxy). NetTuning is constructed remotely (RegisterRemoteComponentResource) by this package's component
// provider, which the test attaches with PULUMI_DEBUG_PROVIDERS. No generated SDK: the type token and property names
// are the schema's.
//
// Usage: ntgo preview|up|destroy (environment: see the test). Prints the CLI's output, then one line "RESULT {...}".
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

// NetTuning is net-tuning:index:NetTuning with the outputs this program reads.
type NetTuning struct {
	pulumi.ResourceState
	Applied  pulumi.StringMapOutput `pulumi:"applied"`
	Previous pulumi.StringMapOutput `pulumi:"previous"`
}

func program(ctx *pulumi.Context) error {
	cfg := config.New(ctx, "")
	var sysctls map[string]interface{}
	if err := json.Unmarshal([]byte(cfg.Require("sysctls")), &sysctls); err != nil {
		return err
	}
	conn := pulumi.Map{
		"host":       pulumi.String(cfg.Require("host")),
		"port":       pulumi.Int(cfg.RequireInt("port")),
		"user":       pulumi.String("root"),
		"privateKey": cfg.RequireSecret("privateKey"),
	}
	var t NetTuning
	if err := ctx.RegisterRemoteComponentResource("net-tuning:index:NetTuning", "web",
		pulumi.Map{"connection": conn, "sysctls": pulumi.ToMap(sysctls)}, &t); err != nil {
		return err
	}
	ctx.Export("applied", t.Applied)
	ctx.Export("previous", t.Previous)
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func main() {
	ctx := context.Background()
	env := os.Getenv
	cmd, err := auto.NewPulumiCommand(&auto.PulumiCommandOptions{Root: env("NT_PULUMI_ROOT"), SkipVersionCheck: true})
	if err != nil {
		fail(err)
	}
	stack, err := auto.UpsertStackInlineSource(ctx, "test", "ntgo", program,
		auto.WorkDir(env("NT_GO_DIR")),
		auto.PulumiHome(env("PULUMI_HOME")),
		auto.Pulumi(cmd),
		auto.SecretsProvider("passphrase"),
		auto.Project(workspace.Project{
			Name:    "ntgo",
			Runtime: workspace.NewProjectRuntimeInfo("go", nil),
			Backend: &workspace.ProjectBackend{URL: env("PULUMI_BACKEND_URL")},
		}))
	if err != nil {
		fail(err)
	}
	key, err := os.ReadFile(env("NT_KEY_FILE"))
	if err != nil {
		fail(err)
	}
	for k, v := range map[string]auto.ConfigValue{
		"host": {Value: env("NT_HOST")}, "port": {Value: env("NT_PORT")}, "sysctls": {Value: env("NT_SYSCTLS")},
		"privateKey": {Value: string(key), Secret: true},
	} {
		if err := stack.SetConfig(ctx, k, v); err != nil {
			fail(err)
		}
	}
	op := ""
	if len(os.Args) > 1 {
		op = os.Args[1]
	}
	result := map[string]interface{}{}
	switch op {
	case "preview":
		r, err := stack.Preview(ctx, optpreview.Diff())
		fmt.Println(r.StdOut)
		fmt.Println(r.StdErr)
		if err != nil {
			fail(err)
		}
		result["changes"] = r.ChangeSummary
	case "up":
		r, err := stack.Up(ctx, optup.ProgressStreams(os.Stdout))
		fmt.Println(r.StdErr)
		if err != nil {
			fail(err)
		}
		for k, v := range r.Outputs {
			result[k] = v.Value
		}
	case "destroy":
		r, err := stack.Destroy(ctx, optdestroy.ProgressStreams(os.Stdout))
		if err != nil {
			fail(err)
		}
		result["summary"] = r.Summary.ResourceChanges
	default:
		fail(fmt.Errorf("usage: ntgo preview|up|destroy (got %q)", op))
	}
	b, _ := json.Marshal(result)
	fmt.Println("RESULT " + string(b))
}
