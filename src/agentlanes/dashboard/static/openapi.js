// Starts the OpenAPI viewer (/schema/swagger) from this server's own copy of Swagger UI
// (static/vendor/swagger-ui): no inline script, nothing from another origin.
window.addEventListener("DOMContentLoaded", () => {
  const root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.url,
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    validatorUrl: null, // the badge would call a third-party validator
  });
});
