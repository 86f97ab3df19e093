//go:build !amd64 || noasm

package kernel

const hasAVX2FMA = false

func expAVX2(dst, src []float64) int { return 0 }

func expScaleAVX2(v []float64, g float64) int { return 0 }

func distRowAVX2(row, x, zt []float64, stride int, g float64, mode int) int { return 0 }

func exp32AVX2(dst, src []float32) int { return 0 }

func distRow32AVX2(row, x, zt []float32, stride int, g float32, mode int) int { return 0 }
