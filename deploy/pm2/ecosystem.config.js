// `validator daemon` under pm2, beside deploy/validator.service (docs/deploy.md, "Under pm2").
//
//   pm2 start deploy/pm2/ecosystem.config.js      # from the clone, as the user that owns it
//   pm2 logs validator                             # one line per round, `chain:` lines in chain mode
//   pm2 stop validator                             # SIGINT: the daemon finishes its round, then exits 0
//   pm2 save && pm2 startup                        # started again at boot (pm2 prints the one command to run)
//
// Settings and secrets come from the clone's .env (KEY=value lines: VALIDATOR_CHAIN__NETUID, the wallet,
// AWS_*, SERVER_URL...; chmod 600) or the environment pm2 was started from, never from this file. Set
// VALIDATOR_HOME to run it elsewhere (the store ./rounds and .env are looked up there) and VALIDATOR_BIN
// when the clone's .venv is not where the daemon is installed.
const path = require("path");

const clone = path.resolve(__dirname, "..", "..");
const home = process.env.VALIDATOR_HOME || clone;

module.exports = {
  apps: [
    {
      name: "validator",
      script: process.env.VALIDATOR_BIN || path.join(clone, ".venv", "bin", "validator"),
      args: ["daemon", "--store", "./rounds"],
      interpreter: "none", // the script is the venv's console entry point, not a JavaScript file
      cwd: home,
      // a chain silent at boot is waited for (a line every 10 s) rather than exit 2; unbuffered lines for pm2 logs
      env: { VALIDATOR_CHAIN__STARTUP_WAIT_S: "0", PYTHONUNBUFFERED: "1", HF_HUB_OFFLINE: "1" },
      kill_signal: "SIGINT", // the daemon finishes the round under way (the same as SIGTERM for it)
      kill_timeout: 300000, // ms: a round's deadline plus the LM's budget, as the unit's TimeoutStopSec
      autorestart: true,
      stop_exit_codes: [0, 2], // 2: an operator's mistake no restart fixes (a bad setting, wallet, store)
      exp_backoff_restart_delay: 1000, // a crash loop waits longer each time (up to 15 s)
      max_memory_restart: "6G",
      merge_logs: true,
      time: true, // pm2 logs with timestamps
    },
  ],
};
