package main

import (
	"context"
	"errors"
	"io"
)

const evalUsage = `Usage: dica eval (not yet available)
`

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("eval is not implemented yet")
}
