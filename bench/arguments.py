"""Command-line value types shared by bench/compare.py and bench/pytorch_mlp.py."""
import argparse


def integer_list(text):
    """'32,256' -> [32, 256]; anything else, or a value below 1, is an argparse error."""
    try:
        values = [int(field) for field in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, e.g. 32,256; got '{text}'")
    return values
