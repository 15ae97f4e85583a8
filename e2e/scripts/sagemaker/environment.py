"""The sm_drivers channel's environment helper, as ModelTrainer uploads one
(scripts/environment.py): reads the three config files and writes the SM_*
variables and the entry script's arguments to /opt/ml/input/sm_training.env
for sm_train.sh to source."""
import json
import shlex
import sys

CONFIG = "/opt/ml/input/config/"
ENV_OUTPUT_FILE = "/opt/ml/input/sm_training.env"


def load(name):
    with open(CONFIG + name) as f:
        return json.load(f)


rc = load("resourceconfig.json")
channels = load("inputdataconfig.json")
hps = load("hyperparameters.json")
for k in ("current_host", "current_instance_type", "hosts", "network_interface_name"):
    if k not in rc:
        sys.exit("resourceconfig.json has no %s" % k)
hps = {k: json.loads(v) for k, v in hps.items()}  # the SDK sends every value JSON-encoded
env = {
    "SM_MODEL_DIR": "/opt/ml/model",
    "SM_INPUT_DIR": "/opt/ml/input",
    "SM_INPUT_CONFIG_DIR": "/opt/ml/input/config",
    "SM_OUTPUT_DIR": "/opt/ml/output",
    "SM_OUTPUT_DATA_DIR": "/opt/ml/output/data",
    "SM_SOURCE_DIR": "/opt/ml/input/data/code",
    "SM_ENTRY_SCRIPT": "train.py",
    "SM_HOSTS": json.dumps(rc["hosts"]),
    "SM_CURRENT_HOST": rc["current_host"],
    "SM_CURRENT_INSTANCE_TYPE": rc["current_instance_type"],
    "SM_NETWORK_INTERFACE_NAME": rc["network_interface_name"],
    "SM_MASTER_ADDR": "algo-1",
    "SM_MASTER_PORT": "7777",
    "SM_CHANNELS": json.dumps(sorted(channels)),
    "SM_HPS": json.dumps(hps),
}
for c in channels:
    env["SM_CHANNEL_" + c.upper()] = "/opt/ml/input/data/" + c
args = []
for k, v in hps.items():
    args += ["--" + k, v if isinstance(v, str) else json.dumps(v)]
with open(ENV_OUTPUT_FILE, "w") as f:
    for k, v in env.items():
        f.write("export %s=%s\n" % (k, shlex.quote(v)))
    f.write("SM_ARGS=(%s)\n" % " ".join(shlex.quote(a) for a in args))
