"""Trains the simplest model there is: the mean of the CSV rows of the train
channel. Writes model.json to the model directory and metrics.json to the
output data directory."""
import argparse, csv, glob, json, os

from lib.stats import mean

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, required=True)
p.add_argument("--optimizer", required=True)
args = p.parse_args()

values = []
for path in sorted(glob.glob(os.path.join(os.environ["SM_CHANNEL_TRAIN"], "**", "*.csv"), recursive=True)):
    with open(path) as f:
        values += [float(row["x"]) for row in csv.DictReader(f)]
for epoch in range(args.epochs):
    print("epoch", epoch + 1, "of", args.epochs, flush=True)
model = {"mean": mean(values), "rows": len(values), "epochs": args.epochs,
         "optimizer": args.optimizer, "host": os.environ["SM_CURRENT_HOST"]}
with open(os.path.join(os.environ["SM_MODEL_DIR"], "model.json"), "w") as f:
    json.dump(model, f)
with open(os.path.join(os.environ["SM_OUTPUT_DATA_DIR"], "metrics.json"), "w") as f:
    json.dump({"rows": len(values)}, f)
