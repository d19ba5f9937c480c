package axle

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/load"
)

// LoadOptions configure CompileFile and CompileBytes: how the module file
// is read (its format, a StableHLO entry's concrete argument shapes) and
// how it is compiled.
type LoadOptions struct {
	load.Options
	CompileOptions
}

// CompileFile reads the module in the file at path — HLO text (.hlo,
// .txt), an HloModuleProto (.pb) or StableHLO (.mlir), by extension or
// else by content — and compiles it. A StableHLO module with dynamic
// dimensions (`tensor<?x4xf32>`, jax.export's shape polymorphism) is
// compiled for the concrete shapes of opts.ArgShapes; the compile cache
// keys by the refined module, so each set of shapes has its executable.
func (c *Client) CompileFile(path string, opts LoadOptions) (*Executable, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	mods, err := load.File(path, opts.Options)
	if err != nil {
		return nil, fmt.Errorf("axle: %w", err)
	}
	return c.compileOne(path, mods, opts.CompileOptions)
}

// CompileBytes is CompileFile for a file's content already in memory;
// name is the file's name, whose extension (if any) tells the format and
// which prefixes error messages.
func (c *Client) CompileBytes(name string, data []byte, opts LoadOptions) (*Executable, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	mods, err := load.Bytes(name, data, opts.Options)
	if err != nil {
		return nil, fmt.Errorf("axle: %w", err)
	}
	return c.compileOne(name, mods, opts.CompileOptions)
}

// compileOne compiles the single module of a file.
func (c *Client) compileOne(name string, mods []*hlo.Module, opts CompileOptions) (*Executable, error) {
	if len(mods) != 1 {
		return nil, fmt.Errorf("axle: %s holds %d modules; compile them one by one (load.File, Client.Compile)", name, len(mods))
	}
	return c.Compile(mods[0], opts)
}
