//go:build amd64 && !noasm

package cpu

import "golang.org/x/sys/cpu"

// AVX2FMA reports whether the CPU and the operating system support AVX2 and
// FMA. It is a constant of the machine, computed once; do not modify it.
var AVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA
