"""benchdnn-py: convolution correctness and performance driver over its own C kernels."""

__version__ = "0.1.0"
