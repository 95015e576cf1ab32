#!/bin/bash
# Writes the alert rule ids the dashboard reads before grafana starts.
set -euo pipefail
echo "alert ids: ${OBSERVE_ALERT_IDS:-none}" > /tmp/alert-ids
