// swagger-ui on #swagger-ui, started from a file (the page's CSP allows no inline script).
const el = document.getElementById("swagger-ui");
window.ui = SwaggerUIBundle({
  url: el.dataset.specUrl,
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
});
