#!/bin/bash
# The sm_drivers channel's driver, as ModelTrainer uploads one: it runs only
# in a SageMaker training environment, exports the SM_* variables from the
# three config files, runs the code channel's train.py with the
# hyperparameters as --name value, and writes /opt/ml/output/failure when
# train.py fails.
set -uo pipefail

config=/opt/ml/input/config
for f in resourceconfig.json inputdataconfig.json; do
	if [ ! -f "$config/$f" ]; then
		echo "sm_train.sh: $config/$f is missing: not a SageMaker training environment" >&2
		exit 1
	fi
done

# The helper prints shell lines: export NAME=value for each variable, then
# the entry script's arguments as ARGS=(...).
lines=$(python3 - "$config" <<'PY'
import json, shlex, sys

config = sys.argv[1]
def load(name):
    with open(config + "/" + name) as f:
        return json.load(f)

rc = load("resourceconfig.json")
channels = load("inputdataconfig.json")
hps = load("hyperparameters.json")
for k in ("current_host", "current_instance_type", "hosts", "network_interface_name"):
    if k not in rc:
        sys.exit("resourceconfig.json has no %s" % k)
env = {
    "SM_HOSTS": json.dumps(rc["hosts"]),
    "SM_CURRENT_HOST": rc["current_host"],
    "SM_CURRENT_INSTANCE_TYPE": rc["current_instance_type"],
    "SM_NETWORK_INTERFACE_NAME": rc["network_interface_name"],
    "SM_MASTER_ADDR": rc["hosts"][0],
    "SM_CHANNELS": json.dumps(sorted(channels)),
    "SM_MODEL_DIR": "/opt/ml/model",
    "SM_OUTPUT_DATA_DIR": "/opt/ml/output/data",
    "SM_HPS": json.dumps({k: json.loads(v) for k, v in hps.items()}),
}
for c in channels:
    env["SM_CHANNEL_" + c.upper()] = "/opt/ml/input/data/" + c
for k, v in env.items():
    print("export %s=%s" % (k, shlex.quote(v)))
args = []
for k, v in hps.items():
    v = json.loads(v)  # the SDK sends every value JSON-encoded
    args += ["--" + k, v if isinstance(v, str) else json.dumps(v)]
print("ARGS=(%s)" % " ".join(shlex.quote(a) for a in args))
PY
) || { echo "AlgorithmError: cannot read $config" >/opt/ml/output/failure; exit 1; }
eval "$lines"

err=$(mktemp)
trap 'rm -f "$err"' EXIT
# train.py runs as a child that gets the SIGTERM of a stop, and the driver
# waits for it to save what it must.
python3 /opt/ml/input/data/code/train.py "${ARGS[@]}" 2>"$err" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM
wait "$child"
status=$?
while kill -0 "$child" 2>/dev/null; do
	wait "$child"
	status=$?
done
cat "$err" >&2
if [ "$status" -ne 0 ]; then
	# The traceback's last line says what went wrong.
	echo "AlgorithmError: $(grep -v '^[[:space:]]*$' "$err" | tail -n 1)" >/opt/ml/output/failure
fi
exit "$status"
