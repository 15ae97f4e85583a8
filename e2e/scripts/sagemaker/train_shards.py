"""Lists what this host got of the train channel, and its resource config,
in the model directory under the host's name."""
import json, os

host = os.environ["SM_CURRENT_HOST"]
root = os.environ["SM_CHANNEL_TRAIN"]
files = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
model = os.environ["SM_MODEL_DIR"]
with open(os.path.join(model, host + ".txt"), "w") as f:
    f.write("".join(name + "\n" for name in files))
with open("/opt/ml/input/config/resourceconfig.json") as f:
    rc = json.load(f)
with open(os.path.join(model, host + ".json"), "w") as f:
    json.dump({"resourceconfig": rc, "sm_hosts": json.loads(os.environ["SM_HOSTS"])}, f)
