# The training container's entrypoint for TrainJob {{.Job}}: it starts
# this pod's Flux broker. On the lead pod, {{.Lead}}, the broker runs the
# training command (the arguments of this script) with
#   flux run {{.RunFlags}}
# once the brokers of every pod have joined, or, without a command, waits
# for users (kubectl exec; . {{.Root}}/flux-view.sh; flux proxy $fluxsocket).
# On the other pods the broker follows the lead until it is done. Written
# by Trainforge's Flux plugin.

root={{.Root}}
view=$root/view
config=$root/config
command="$*"

# The view's software goes where its links point.
cp -R "$root"/software/* {{.Software}}/

# Flux runs from the view, after the image's own programs.
export PATH=$PATH:$view/bin
pythonlib=$(find "$view/lib" -maxdepth 1 -type d -name 'python3*' 2>/dev/null | head -n 1)
if [ -n "$pythonlib" ] && [ -f "$view/bin/$(basename "$pythonlib")" ]; then
  # The view's python and python3 link to the installer image's paths,
  # absent here; its versioned python is whole.
  rm -f "$view/bin/python" "$view/bin/python3"
fi
export PYTHONPATH=${PYTHONPATH:-}:$pythonlib/site-packages
export FLUX_RC_EXTRA=$view/etc/flux/rc1.d

# For users: switch the scheduler to Fluxion, and the environment to run
# Flux commands in (. {{.Root}}/flux-view.sh).
cat > "$root/load-fluxion.sh" <<'LOAD_FLUXION'
flux module remove sched-simple
flux module load sched-fluxion-resource
flux module load sched-fluxion-qmanager
LOAD_FLUXION
cat > "$root/flux-view.sh" <<FLUX_VIEW
#!/bin/bash
export PATH=$PATH
export PYTHONPATH=$PYTHONPATH
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:$view/lib
export fluxsocket=local://$config/run/flux/local
FLUX_VIEW

# The broker reads its CURVE certificate only when no one else can.
curve=$config/etc/curve/curve.cert
cp {{.Curve}}/{{.CurveKey}} "$curve"
chmod 0600 "$curve"

# The resources of every broker: {{.Resources}}.
flux R encode --hosts="$(cat "$config/etc/flux/system/hostlist")" {{.Resources}} > "$config/etc/flux/system/R"

export STATE_DIR=$config/var/lib/flux
export FLUX_OUTPUT_DIR=/tmp/fluxout
mkdir -p "$STATE_DIR" "$FLUX_OUTPUT_DIR" "$config/etc/flux/system/cron.d"

cfg=$config/etc/flux/config
broker_options="-Scron.directory=$config/etc/flux/system/cron.d -Stbon.fanout=256 -Srundir=$config/run/flux -Sstatedir=$STATE_DIR -Slocal-uri=local://$config/run/flux/local -Slog-stderr-level=0 -Slog-stderr-mode=local"

status=0
if [ "$(hostname)" = "{{.Lead}}" ]; then
  if [ -z "$command" ]; then
    echo "No command: the Flux cluster waits for users"
    flux broker --config-path "$cfg" $broker_options
    status=$?
  else
    echo "flux run {{.RunFlags}} $command"
    flux start -o --config "$cfg" $broker_options flux run {{.RunFlags}} $command
    status=$?
  fi
else
  # Until the lead broker is up, a follower's broker gives up; try again.
  until flux start -o --config "$cfg" $broker_options; do
    echo "The Flux broker exited with status $?; trying again in 15s"
    sleep 15
  done
fi

touch "$root/flux-operator-complete.txt"
exit $status
