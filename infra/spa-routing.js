// CloudFront Function (runtime cloudfront-js-2.0), viewer request of the dashboard's default behaviour (S3).
// The app routes on the client: a path whose last segment has no file extension (/keys/abc, /verify-email, /) is
// one of its screens and gets index.html; files (/assets/index-abc.js, /favicon.svg) pass unchanged. /api/* has
// its own behaviour without this function, so the API's 404s stay problem+json. Tested by test/infra/spa-routing.test.ts,
// which runs this very file.
function handler(event) {
  var request = event.request;
  var uri = request.uri;
  var last = uri.substring(uri.lastIndexOf('/') + 1);
  if (last.indexOf('.') === -1) request.uri = '/index.html';
  return request;
}
