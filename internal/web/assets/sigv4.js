// AWS Signature Version 4 for the console's requests, with the browser's
// WebCrypto: the key it signs with is the one a person signed in with,
// kept in this tab's sessionStorage only. Requests go to this page's own
// server, for the service "batch" in the server's region.
'use strict';

window.sharqSigV4 = (function () {
  const STORE = 'sharq-access-key';
  const enc = new TextEncoder();

  function hex(buf) {
    return [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('');
  }

  async function sha256(s) {
    return hex(await crypto.subtle.digest('SHA-256', enc.encode(s)));
  }

  async function hmac(key, s) {
    const k = await crypto.subtle.importKey('raw', typeof key === 'string' ? enc.encode(key) : key,
      { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    return crypto.subtle.sign('HMAC', k, enc.encode(s));
  }

  // rfc3986 escapes as SigV4 asks: everything but unreserved characters.
  function rfc3986(s) {
    return encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  }

  // canonicalURI escapes each segment of the path as sent once more, as
  // the AWS SDKs do for every service but S3.
  function canonicalURI(path) {
    return path.split('/').map(rfc3986).join('/');
  }

  function canonicalQuery(params) {
    return [...params].map(([k, v]) => [rfc3986(k), rfc3986(v)])
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
      .map(([k, v]) => k + '=' + v).join('&');
  }

  function amzDate(d) {
    return d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  }

  async function signature(key, date, scope, canonical) {
    const toSign = ['AWS4-HMAC-SHA256', date, scope, await sha256(canonical)].join('\n');
    const [day, region, service] = scope.split('/');
    let k = await hmac('AWS4' + key.secret, day);
    k = await hmac(k, region);
    k = await hmac(k, service);
    k = await hmac(k, 'aws4_request');
    return hex(await hmac(k, toSign));
  }

  function scopeOf(key, date) {
    return date.slice(0, 8) + '/' + key.region + '/batch/aws4_request';
  }

  // headers returns the headers that sign a request of method to url
  // (this server's) with body (a string or undefined).
  async function headers(key, method, url, body, contentType) {
    const u = new URL(url, location.href);
    const date = amzDate(new Date());
    const payload = await sha256(body || '');
    const h = { host: u.host, 'x-amz-date': date };
    if (contentType) h['content-type'] = contentType;
    const names = Object.keys(h).sort();
    const canonical = [method, canonicalURI(u.pathname), canonicalQuery(u.searchParams),
      names.map((n) => n + ':' + h[n] + '\n').join(''), names.join(';'), payload].join('\n');
    const scope = scopeOf(key, date);
    const sig = await signature(key, date, scope, canonical);
    const out = { 'X-Amz-Date': date, 'X-Amz-Content-Sha256': payload,
      Authorization: 'AWS4-HMAC-SHA256 Credential=' + key.id + '/' + scope + ', SignedHeaders=' + names.join(';') + ', Signature=' + sig };
    if (contentType) out['Content-Type'] = contentType;
    return out;
  }

  // presign returns url (a GET of this server's) with its signature in
  // the query, valid for expires seconds: for EventSource, which sends no
  // headers of its own.
  async function presign(key, url, expires) {
    const u = new URL(url, location.href);
    const date = amzDate(new Date());
    const scope = scopeOf(key, date);
    const q = u.searchParams;
    q.set('X-Amz-Algorithm', 'AWS4-HMAC-SHA256');
    q.set('X-Amz-Credential', key.id + '/' + scope);
    q.set('X-Amz-Date', date);
    q.set('X-Amz-Expires', String(expires));
    q.set('X-Amz-SignedHeaders', 'host');
    const canonical = ['GET', canonicalURI(u.pathname), canonicalQuery(q), 'host:' + u.host + '\n', 'host', await sha256('')].join('\n');
    q.set('X-Amz-Signature', await signature(key, date, scope, canonical));
    return u.pathname + '?' + q.toString();
  }

  function load() {
    try { return JSON.parse(sessionStorage.getItem(STORE)); } catch (_) { return null; }
  }

  return {
    key: load,
    signIn(id, secret, region) { sessionStorage.setItem(STORE, JSON.stringify({ id, secret, region: region || 'us-east-1' })); },
    signOut() { sessionStorage.removeItem(STORE); },
    headers, presign,
  };
})();
