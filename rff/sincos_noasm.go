//go:build !amd64 || noasm

package rff

const hasAVX2FMA = false

func sincosAVX2(sin, cos, x []float64, scale float64) int { return 0 }

func projAVX2(proj, x, wt []float64, stride int) {}
