"""Numerical constants shared by the engine, the compiler and the studio (MuJoCo's mjMINVAL ...)."""
import math

MINVAL = 1e-15      # MuJoCo's mjMINVAL: smallest value treated as non-zero
EPS = 1e-14         # MuJoCo's mjEPS (compiler tolerance for norms and volumes)
PI = math.pi
