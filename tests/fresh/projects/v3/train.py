import argparse

from lightfit import fit


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--strategy", choices=["cpu", "ddp", "xla"], default="xla")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--max-norm", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="/tmp/lightfit")
    a = p.parse_args()
    fit(vars(a))


if __name__ == "__main__":
    main()
