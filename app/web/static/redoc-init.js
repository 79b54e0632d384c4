// Redoc 3 ships as an ES module; start it on #redoc with its telemetry off (nothing leaves this service).
import { init } from "./vendor/redoc-3.0.1/redoc.standalone.js";

const el = document.getElementById("redoc");
init(el.dataset.specUrl, { disableTelemetry: true }, el);
