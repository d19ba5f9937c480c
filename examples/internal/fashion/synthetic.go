package fashion

import "math/rand/v2"

// Synthetic returns a small learnable stand-in for Fashion-MNIST, so that
// the examples' tests need not have the real files: an image of class c
// is bright (200..255) in rows 2c..2c+2 and dim noise (0..49) elsewhere.
func Synthetic(nTrain, nTest int, seed uint64) *Dataset {
	rng := rand.New(rand.NewPCG(seed, 3))
	split := func(n int) Split {
		s := Split{N: n, Pixels: make([]uint8, n*Side*Side), Labels: make([]int32, n)}
		for i := range n {
			c := rng.IntN(10)
			s.Labels[i] = int32(c)
			img := s.Pixels[i*Side*Side : (i+1)*Side*Side]
			for j := range img {
				if r := j / Side; r >= 2*c && r < 2*c+3 {
					img[j] = uint8(200 + rng.IntN(56))
				} else {
					img[j] = uint8(rng.IntN(50))
				}
			}
		}
		return s
	}
	return &Dataset{Train: split(nTrain), Test: split(nTest)}
}
