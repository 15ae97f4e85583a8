"""Trains in steps with checkpoints: on SIGTERM it saves its step to the
checkpoint directory and exits; started again, it resumes from there, does
--more steps and writes model.json. A first run writes --ready once it has
made progress worth saving.

--hold instead waits until that file exists and exits: a job that keeps
its instance until the test lets it go."""
import argparse, json, os, signal, sys, time

p = argparse.ArgumentParser()
p.add_argument("--ready")
p.add_argument("--more", type=int, default=3)
p.add_argument("--hold")
args = p.parse_args()

if args.hold:
    while not os.path.exists(args.hold):
        time.sleep(0.05)
    sys.exit(0)

ckpt = "/opt/ml/checkpoints/state.json"
stop = False

def on_term(signum, frame):
    global stop
    stop = True

signal.signal(signal.SIGTERM, on_term)
step, resumed = 0, None
if os.path.exists(ckpt):
    with open(ckpt) as f:
        step = resumed = json.load(f)["step"]
    print("resumed from step", resumed, flush=True)
elif os.path.exists(args.ready):
    sys.exit("an earlier attempt made progress, but its checkpoint is not in " + ckpt)
else:
    print("no checkpoint: starting at step 0", flush=True)
while True:
    if stop:
        with open(ckpt, "w") as f:
            json.dump({"step": step}, f)
        print("SIGTERM: checkpoint at step", step, flush=True)
        sys.exit(0)
    if resumed is not None and step >= resumed + args.more:
        break
    step += 1
    if resumed is None and step == 5:
        open(args.ready, "w").close()
    time.sleep(0.02)
with open(os.path.join(os.environ["SM_MODEL_DIR"], "model.json"), "w") as f:
    json.dump({"resumed_from": resumed, "final_step": step}, f)
