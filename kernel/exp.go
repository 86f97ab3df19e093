package kernel

import "math"

// Fast exponential for kernel blocks.
//
// exp(x) = 2^(k/64) e^r with k = round(64 x / ln 2) and
// r = x - k ln2/64 (|r| <= ln2/128 ~ 0.0054, two-part Cody-Waite reduction,
// exact for |k| < 2^21). Then 2^(k/64) = 2^(k>>6) * 2^((k&63)/64), the second
// factor read from a 64-entry table stored as a double-double (hi + lo), and
// e^r - 1 is the degree-5 Taylor polynomial (truncation error r^6/720 <
// 3.5e-17 relative). The result t_hi + (t_lo + t_hi p(r)) is within 1 ulp of
// exp(x) (TestExpCorrectlyRounded), and the power of two is added to the
// exponent bits directly.
//
// The fast path covers -707 <= x <= 709, where the result is a normal number;
// below -746 the result is 0 (exp underflows), and the rest of the line
// (subnormal results, overflow, NaN) is delegated to math.Exp.

const (
	expN       = 64
	expShift   = 0x1.8p52 // adding it rounds a float of magnitude < 2^51 to an integer
	expInvLn2N = expN / math.Ln2
	// ln2/64 split into a high part with 32 significant bits (so that
	// k * expLn2HiN is exact for |k| < 2^21) and the rest.
	expLn2HiN    = 6.93147180369123816490e-01 / expN
	expLn2LoN    = 1.90821492927058770002e-10 / expN
	expShiftBits = 0x4338000000000000 // math.Float64bits(expShift)
	expFastLo    = -707
	expFastHi    = 709
	expZero      = -746
)

// expSlow is exp outside the fast range.
func expSlow(x float64) float64 {
	if x < expZero {
		return 0
	}
	return math.Exp(x)
}

// ExpSlice sets dst[i] = exp(src[i]) for every i: within 1 ulp of the
// correctly rounded result (so within 4.5e-16 relative of math.Exp),
// exactly 0 below -746, +Inf above 709.78, NaN for NaN. On amd64 CPUs with
// AVX2 and FMA it runs 4 lanes at a time (a table-free degree-13
// polynomial after reduction by ln 2), elsewhere it is a scalar
// table-driven exp; BenchmarkExp compares both with math.Exp. dst and src
// must be the same slice or not overlap. ExpSlice panics if
// len(dst) < len(src).
func ExpSlice(dst, src []float64) {
	dst = dst[:len(src)]
	i := 0
	if hasAVX2FMA {
		n4 := len(src) &^ 3
		for i < n4 {
			i += expAVX2(dst[i:n4], src[i:n4])
			if i < n4 {
				// A block with a subnormal, infinite or NaN result.
				expScalar(dst[i:i+4], src[i:i+4])
				i += 4
			}
		}
	}
	expScalar(dst[i:], src[i:])
}

// expScalar sets dst[i] = exp(src[i]) with the scalar table-driven exp.
func expScalar(dst, src []float64) { expInto(dst, src, 1) }

// expScale sets v[i] = exp(g * v[i]) in place.
func expScale(v []float64, g float64) { expInto(v, v, g) }

// expInto sets dst[i] = exp(g * src[i]) (multiplying by g = 1 changes no
// value). It is the one implementation of the scalar exp: its body stays
// in the loop because a call per element costs as much as the arithmetic,
// and the body is too large for the compiler to inline. dst and src must be
// the same slice or not overlap.
func expInto(dst, src []float64, g float64) {
	dst = dst[:len(src)]
	for i, x := range src {
		x *= g
		if x >= expFastLo && x <= expFastHi {
			kf := x*expInvLn2N + expShift
			// kf lies in the binade of expShift, where one ulp is 1, so
			// the difference of the bit patterns is the integer k.
			ki := int64(math.Float64bits(kf) - expShiftBits)
			kf -= expShift
			r := x - kf*expLn2HiN - kf*expLn2LoN
			t := &expTab[ki&(expN-1)]
			r2 := r * r
			p := r + r2*(0.5+r*(1.0/6)) + r2*r2*(1.0/24+r*(1.0/120))
			y := t[0] + (t[1] + t[0]*p)
			// Multiply by 2^(k>>6) by adding to the exponent field
			// (modular arithmetic handles negative k).
			dst[i] = math.Float64frombits(math.Float64bits(y) + uint64(ki>>6)<<52)
		} else {
			dst[i] = expSlow(x)
		}
	}
}

// expTab[j] = 2^(j/64) as a double-double {hi, lo}: hi is 2^(j/64) rounded
// to double, lo the rest (TestExpTable checks both with 200-bit arithmetic).
var expTab = [64][2]float64{
	{1, 0},
	{1.0108892860517005, -1.5234778603368577e-17},
	{1.0218971486541166, 5.109225028973444e-17},
	{1.0330248790212284, 7.600838874027088e-18},
	{1.0442737824274138, 8.551889705537965e-17},
	{1.0556451783605572, 1.759325738772092e-18},
	{1.0671404006768237, -7.899853966841582e-17},
	{1.0787607977571199, -6.656660436056593e-17},
	{1.0905077326652577, -3.046782079812471e-17},
	{1.102382583307841, 5.2660368715706944e-17},
	{1.1143867425958924, 1.0410278456845571e-16},
	{1.1265216186082418, 5.165856758795457e-17},
	{1.1387886347566916, 8.912812676025408e-17},
	{1.1511892299529827, 3.250710218863827e-17},
	{1.1637248587775775, 3.8292048369240935e-17},
	{1.1763969916502812, 5.554203254218079e-17},
	{1.189207115002721, 3.982015231465646e-17},
	{1.202156731452703, 6.644981499252301e-17},
	{1.215247359980469, -7.712630692681488e-17},
	{1.22848053610687, -1.89878163130253e-17},
	{1.241857812073484, 4.658027591836937e-17},
	{1.255380757024691, -6.7113898212968784e-18},
	{1.2690509571917332, 2.667932131342186e-18},
	{1.2828700160787783, 1.713594918243561e-17},
	{1.2968395546510096, 2.5382502794888315e-17},
	{1.3109612115247644, -7.181536135519454e-17},
	{1.3252366431597413, -2.8587312100388614e-17},
	{1.339667524053303, 8.927282594831732e-17},
	{1.3542555469368927, 7.70094837980299e-17},
	{1.3690024229745905, 9.593797919118849e-17},
	{1.383909881963832, -6.770511658794786e-17},
	{1.3989796725383112, -9.614213209051323e-17},
	{1.4142135623730951, -9.667293313452913e-17},
	{1.42961333839197, -1.2031642489053655e-17},
	{1.4451808069770467, -3.0237581349939873e-17},
	{1.460917794180647, -5.600377186075216e-17},
	{1.4768261459394993, -3.483994556892796e-17},
	{1.4929077282912648, 1.4192920154284036e-17},
	{1.5091644275934228, -1.016455327754295e-16},
	{1.5255981507445384, -1.1024941712342561e-16},
	{1.5422108254079407, 7.949834809697621e-17},
	{1.559004400237837, 3.7812070533575275e-17},
	{1.5759808451078865, -1.0136916471278304e-17},
	{1.593142151342267, -1.0094406542311964e-16},
	{1.6104903319492543, 2.4707192569797888e-17},
	{1.6280274218573478, -6.712955084707084e-17},
	{1.645755478153965, -1.0125679913674773e-16},
	{1.6636765803267364, 5.8909926967131e-17},
	{1.681792830507429, 8.199010020581497e-17},
	{1.7001063537185235, -8.0237193703977e-18},
	{1.718619298122478, -1.851380418263111e-17},
	{1.7373338352737062, 3.164389299292957e-17},
	{1.7562521603732995, 2.960140695448873e-17},
	{1.7753764925265212, 6.429731796556572e-17},
	{1.7947090750031072, 1.8227458427912087e-17},
	{1.8142521755003989, -9.969531538920349e-17},
	{1.8340080864093424, 3.283107224245627e-17},
	{1.8539791250833855, 9.761887490727594e-17},
	{1.8741676341103, -6.122763413004143e-17},
	{1.8945759815869656, 3.4034035352165297e-17},
	{1.9152065613971474, -1.0619946056195963e-16},
	{1.9360617934922943, 1.0332385960676326e-16},
	{1.9571441241754002, 8.960767791036668e-17},
	{1.978456026387951, 4.0388753109278167e-17},
}
