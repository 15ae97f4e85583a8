#!/bin/bash
# The sm_drivers channel's driver, as ModelTrainer uploads one: it runs only
# in a SageMaker training environment, has scripts/environment.py write the
# SM_* variables from the three config files, runs the code channel's
# train.py from that channel's directory with the hyperparameters as
# --name value, and writes /opt/ml/output/failure when anything fails.
set -uo pipefail

# handle_error STATUS MESSAGE writes the failure file and exits.
handle_error() {
	echo "AlgorithmError: $2" >/opt/ml/output/failure
	exit "$1"
}

config=/opt/ml/input/config
for f in resourceconfig.json inputdataconfig.json; do
	if [ ! -f "$config/$f" ]; then
		echo "sm_train.sh: $config/$f is missing: not a SageMaker training environment" >&2
		exit 1
	fi
done

python3 /opt/ml/input/data/sm_drivers/scripts/environment.py || handle_error $? "cannot read $config"
source /opt/ml/input/sm_training.env || handle_error $? "cannot read /opt/ml/input/sm_training.env"
cd "$SM_SOURCE_DIR" || handle_error $? "no $SM_SOURCE_DIR"

# train.py runs as a child that gets the SIGTERM of a stop, and the driver
# waits for it to save what it must.
err=$(mktemp)
trap 'rm -f "$err"' EXIT
python3 "$SM_ENTRY_SCRIPT" "${SM_ARGS[@]}" 2>"$err" &
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
	handle_error "$status" "$(grep -v '^[[:space:]]*$' "$err" | tail -n 1)"
fi
