/// The one page served without a session: a form for the token, and a script that takes the token from the
/// link's fragment (`/signin#token=…`, which a browser never sends to a server, so no proxy's or ingress's log
/// holds it), drops it from the address bar and posts it. The strict Content-Security-Policy allows no inline
/// script: the script is a file of its own. A wrong token gets this page again (403), saying so: its script then
/// takes the next link's token too, which a browser opens as a change of fragment on the same page, not a load.
public enum SignInPage {
    public static let page = refused(nil)

    /// The page, with `problem` said above the form (HTML-escaped); nil: none.
    public static func refused(_ problem: String?) -> String {
        let said = problem.map { "<p class=\"problem\" role=\"alert\">\(HTML.escape($0))</p>\n" } ?? ""
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Sign in · so</title>
            <link rel="stylesheet" href="/static/app.css">
            <script src="/static/signin.js" defer></script>
            </head>
            <body>
            <header><span class="brand">so</span></header>
            <main>
            <h1>Sign in</h1>
            \(said)<form id="signin" method="post" action="/signin">
            <label>The dashboard's token <input type="password" name="token" autocomplete="off" required></label>
            <button type="submit">Sign in</button>
            </form>
            </main>
            </body>
            </html>

            """
    }

    public static let script = #"""
        'use strict';
        function signIn() {
          const m = /(?:^#|&)token=([^&]*)/.exec(location.hash);
          if (!m) return;
          // Out of the address bar and the history before anything else.
          history.replaceState(null, '', location.pathname);
          const form = document.getElementById('signin');
          form.elements.token.value = decodeURIComponent(m[1]);
          form.submit();
        }
        signIn();
        // Another link opened on this page (after a wrong token) only changes the fragment.
        window.addEventListener('hashchange', signIn);
        """#
}
