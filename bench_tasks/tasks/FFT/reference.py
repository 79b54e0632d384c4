"""float64 reference for FFT: the forward, unnormalised DFT of N complex points in natural order,

    X[k] = sum_n (re[n] + i im[n]) e^(-2 pi i k n / N),

returned as planar real and imaginary parts (numpy's FFT in complex128).
"""

import numpy as np


def reference(x: dict[str, np.ndarray], p: dict, precision: str, sample: dict | None = None) -> dict[str, np.ndarray]:
    spectrum = np.fft.fft(x["input_real"] + 1j * x["input_img"])
    return {"output_real": spectrum.real.copy(), "output_img": spectrum.imag.copy()}
