"""Fails as training code does: with an exception, having written what
tells why to the output data directory."""
import argparse, os

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, required=True)
args = p.parse_args()
print("epoch 1 of", args.epochs, flush=True)
with open(os.path.join(os.environ["SM_OUTPUT_DATA_DIR"], "losses.txt"), "w") as f:
    f.write("nan\n")
raise ValueError("loss is NaN after epoch 1")
