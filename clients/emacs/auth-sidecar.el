;;; auth-sidecar.el --- Microsoft identity platform sign-in through auth-sidecar -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1") (jsonrpc "1.0.9"))
;; Keywords: comm, tools

;;; Commentary:

;; Sign in to the Microsoft identity platform (device code or browser), get access
;; tokens silently, show the current account, call Microsoft Graph and sign out, by
;; driving the auth-sidecar process over JSON-RPC 2.0 with Emacs's built-in jsonrpc.el
;; (`jsonrpc-process-connection', LSP "Content-Length" framing).
;;
;;   (setq auth-sidecar-configuration
;;         '(:clientId "00001111-aaaa-2222-bbbb-3333cccc4444"
;;           :authority "https://login.microsoftonline.com/common"))
;;
;; Commands: `auth-sidecar-sign-in' (C-u: browser flow), `auth-sidecar-cancel',
;; `auth-sidecar-token', `auth-sidecar-account', `auth-sidecar-graph-me',
;; `auth-sidecar-graph', `auth-sidecar-sign-out', `auth-sidecar-stop'.
;;
;; From Lisp, `auth-sidecar-token' returns the access token, `auth-sidecar-account'
;; the account plist, `auth-sidecar-graph' the Graph buffer; failures signal
;; `auth-sidecar-error' (a `user-error'); `auth-sidecar-last-error' holds the JSON-RPC
;; error (:code :message :data) of the last failure.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'json)
(require 'seq)

(defgroup auth-sidecar nil
  "Microsoft identity platform sign-in through auth-sidecar."
  :group 'comm
  :prefix "auth-sidecar-")

(defcustom auth-sidecar-program (or (getenv "AUTH_SIDECAR_BIN") "auth-sidecar")
  "The auth-sidecar executable."
  :type 'string)

(defcustom auth-sidecar-program-args nil
  "Extra command-line arguments, e.g. (\"--config\" \"~/.config/auth-sidecar.json\")."
  :type '(repeat string))

(defcustom auth-sidecar-profile nil
  "A profile of the configuration file (its \"profiles\"), passed as --profile NAME.
nil: the file's defaultProfile (or $AUTH_SIDECAR_PROFILE)."
  :type '(choice (const :tag "The default profile" nil) string))

(defcustom auth-sidecar-environment nil
  "Extra environment for the sidecar, as \"NAME=value\" strings (e.g. SSL_CERT_FILE)."
  :type '(repeat string))

(defcustom auth-sidecar-configuration nil
  "Configuration plist sent with `initialize' (keys of the protocol's Configuration:
:clientId :authority :redirectUri :knownAuthorities :scopes :graphEndpoint :cache
:sharedDeviceMode :clientCapabilities :browser).  Lists of strings must be vectors,
e.g. :knownAuthorities [\"contoso.b2clogin.com\"].  nil: send no `initialize' (the
command line configures the sidecar)."
  :type 'plist)

(defcustom auth-sidecar-default-flow "deviceCode"
  "Flow of `auth-sidecar-sign-in' without a prefix argument: \"deviceCode\" or \"browser\"."
  :type '(choice (const "deviceCode") (const "browser")))

(defcustom auth-sidecar-request-timeout 60
  "Seconds to wait for a non-interactive request."
  :type 'number)

(defcustom auth-sidecar-sign-in-timeout 900
  "Seconds to wait for an interactive sign-in (the device code lifetime)."
  :type 'number)

(defcustom auth-sidecar-open-url-function #'browse-url
  "Function of one argument, the URL, used when the configuration's :browser is \"client\"."
  :type 'function)

(defcustom auth-sidecar-events-buffer-size 0
  "Scrollback of the \"*auth-sidecar events*\" log.  0 (the default) logs nothing:
the log would hold access tokens in clear."
  :type 'integer)

(defvar auth-sidecar-sign-in-hook nil
  "Run after a successful sign-in, with the TokenResult plist as argument.")

(define-error 'auth-sidecar-error "auth-sidecar" 'user-error)

(defvar auth-sidecar-last-error nil
  "The JSON-RPC error plist (:code :message :data) of the last failure.")

(defvar auth-sidecar-device-code nil
  "The `deviceCode' notification (a plist) of the sign-in in progress, if any.")

(defvar auth-sidecar--connection nil)
(defvar auth-sidecar--sign-in nil
  "Plist (:id ID :connection CONN) of the interactive sign-in in progress.")

(defconst auth-sidecar--device-buffer "*auth-sidecar sign-in*")

;;;; Messages and errors

(defun auth-sidecar--message (format-string &rest args)
  (message "auth-sidecar: %s" (apply #'format format-string args)))

(defun auth-sidecar--describe-error (err)
  "One line for the JSON-RPC error plist ERR."
  (let* ((code (plist-get err :code))
         (name (plist-get (plist-get err :data) :name)))
    (concat (format "%s (%s%s)" (plist-get err :message) code
                    (if name (format " %s" name) ""))
            (if (eql code -50002) "; run M-x auth-sidecar-sign-in" ""))))

(defun auth-sidecar--fail (err)
  "Record ERR and signal `auth-sidecar-error'."
  (setq auth-sidecar-last-error err)
  (signal 'auth-sidecar-error (list (auth-sidecar--describe-error err))))

(defun auth-sidecar--describe-account (account)
  (if (null account) "nobody"
    (let ((name (plist-get account :name))
          (username (plist-get account :username)))
      (if name (format "%s <%s>" name username) (format "%s" username)))))

;;;; The process

(defun auth-sidecar--on-notification (_conn method params)
  (when (eq method 'deviceCode)
    (setq auth-sidecar-device-code params)
    (when auth-sidecar--sign-in
      (setq auth-sidecar--sign-in
            (plist-put auth-sidecar--sign-in :id (plist-get params :requestId))))
    (with-current-buffer (get-buffer-create auth-sidecar--device-buffer)
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert "Microsoft sign-in\n\n"
                (plist-get params :message) "\n\n"
                "Code: " (plist-get params :userCode) "\n"
                "URL:  " (plist-get params :verificationUri) "\n\n"
                "M-x auth-sidecar-cancel cancels.\n")
        (fill-region (point-min) (point-max)))
      (special-mode))
    (unless noninteractive (display-buffer auth-sidecar--device-buffer))
    (auth-sidecar--message "%s" (plist-get params :message))))

(defun auth-sidecar--on-request (_conn method params)
  (pcase method
    ('openUrl
     (condition-case e
         (progn (funcall auth-sidecar-open-url-function (plist-get params :url))
                (auth-sidecar--message "opened the sign-in page in the browser")
                (make-hash-table))
       (error (jsonrpc-error :code -51006
                             :message (format "Browser unavailable: %s" (error-message-string e))))))
    ('pasteSignIn
     (let ((pasted (condition-case nil
                       (auth-sidecar--ask-pasted-address (plist-get params :url))
                     (quit nil))))
       (if (and (stringp pasted) (string-match-p "[^[:space:]]" pasted))
           (list :redirectedTo pasted)
         (jsonrpc-error :code -32000 :message "no address was pasted"))))
    (_ (jsonrpc-error :code -32601 :message "Method not found"))))

(defun auth-sidecar--ask-pasted-address (url)
  "The paste-back sign-in: show URL (also put in the kill ring) and ask, with
`read-string', for the address the browser ended on (http://localhost...)."
  (ignore-errors (kill-new url))
  (auth-sidecar--message "to sign in, open this URL in any browser (also in the kill ring): %s" url)
  (read-string "auth-sidecar: paste the address the browser ended on (http://localhost...): "))

(defun auth-sidecar--start ()
  "Start the sidecar and send `initialize'; return the connection."
  (let* ((name "auth-sidecar")
         (program (executable-find (expand-file-name auth-sidecar-program)))
         (conn
          (progn
            (unless program
              (auth-sidecar--fail
               (list :code -32603 :message (format "cannot start %s: not executable"
                                                   auth-sidecar-program)
                     :data '(:name "sidecarUnavailable"))))
            (make-instance
             'jsonrpc-process-connection
             :name name
             :events-buffer-scrollback-size auth-sidecar-events-buffer-size
             :notification-dispatcher #'auth-sidecar--on-notification
             :request-dispatcher #'auth-sidecar--on-request
             :on-shutdown #'auth-sidecar--on-shutdown
             :process
             (lambda ()
               (let ((process-environment (append auth-sidecar-environment process-environment)))
                 (make-process
                  :name name
                  :command (append (list program)
                                  (and auth-sidecar-profile (list "--profile" auth-sidecar-profile))
                                  auth-sidecar-program-args)
                  :connection-type 'pipe
                  :coding 'utf-8-emacs-unix
                  :noquery t
                  ;; jsonrpc.el expects exactly this stderr buffer name
                  :stderr (get-buffer-create (format "*%s stderr*" name)))))))))
    (setq auth-sidecar--connection conn)
    (when auth-sidecar-configuration
      (condition-case e
          (auth-sidecar--send conn 'initialize
                              (append auth-sidecar-configuration
                                      '(:clientInfo (:name "auth-sidecar.el" :version "0.1.0"))))
        (auth-sidecar-error
         (auth-sidecar-stop)
         (signal (car e) (cdr e)))))
    conn))

(defun auth-sidecar--on-shutdown (conn)
  (when (eq conn auth-sidecar--connection)
    (setq auth-sidecar--connection nil))
  (when (and auth-sidecar--sign-in (eq (plist-get auth-sidecar--sign-in :connection) conn))
    (auth-sidecar--end-sign-in)))

(defun auth-sidecar--connection ()
  (if (and auth-sidecar--connection (jsonrpc-running-p auth-sidecar--connection))
      auth-sidecar--connection
    (auth-sidecar--start)))

(defun auth-sidecar--last-stderr-line ()
  "The sidecar's last non-empty stderr line (its one-line reason for exiting), or nil."
  ;; jsonrpc.el renames the stderr buffer to a hidden one (a leading space) once started.
  (let ((buffer (or (get-buffer " *auth-sidecar stderr*") (get-buffer "*auth-sidecar stderr*"))))
    (when buffer
      ;; The stderr pipe may still hold the last line when the sentinel runs: read it out.
      (let ((pipe (get-buffer-process buffer)))
        (when (and pipe (process-live-p pipe)) (accept-process-output pipe 0.5)))
      (with-current-buffer buffer
        (let ((lines (split-string (buffer-substring-no-properties (point-min) (point-max))
                                   "\n" t "[ \t\r]+")))
          (car (last (seq-remove (lambda (line) (string-prefix-p "Process " line)) lines))))))))

(defun auth-sidecar--jsonrpc-error-plist (e)
  "The error plist from the data of a `jsonrpc-error' condition E.
When the server died (jsonrpc.el's \"Server died\"), the message is the sidecar's own
last stderr line: it names the cause and the fix (a configuration mistake, say)."
  (let* ((d (cdr e))
         (message (or (alist-get 'jsonrpc-error-message d) "error"))
         (tail (and (string-prefix-p "Server died" message) (auth-sidecar--last-stderr-line))))
    (list :code (alist-get 'jsonrpc-error-code d)
          :message (if tail (format "auth-sidecar exited: %s" tail) message)
          :data (if tail '(:name "sidecarExited") (alist-get 'jsonrpc-error-data d)))))

(defun auth-sidecar-request (method &optional params timeout)
  "Send METHOD with PARAMS (a plist; nil means {}) and wait for the result.
Signal `auth-sidecar-error' on an error reply."
  (auth-sidecar--send (auth-sidecar--connection) method params timeout))

(defun auth-sidecar--send (conn method params &optional timeout)
  "Send METHOD with PARAMS on CONN and wait; signal `auth-sidecar-error' on an error."
  (condition-case e
      (jsonrpc-request conn method (or params (make-hash-table))
                       :timeout (or timeout auth-sidecar-request-timeout))
    (jsonrpc-error (auth-sidecar--fail (auth-sidecar--jsonrpc-error-plist e)))
    ;; The sidecar exited before the request could be written (a configuration mistake
    ;; ends it within milliseconds): its last stderr line says why.
    (error (if (jsonrpc-running-p conn)
               (signal (car e) (cdr e))
             (auth-sidecar--fail (auth-sidecar--exited-plist (error-message-string e)))))))

(defun auth-sidecar--exited-plist (fallback)
  "The error plist for a sidecar that has exited: its last stderr line, else FALLBACK."
  (let ((tail (auth-sidecar--last-stderr-line)))
    (list :code -32603
          :message (if tail (format "auth-sidecar exited: %s" tail) fallback)
          :data '(:name "sidecarExited"))))

;;;; Commands

(defun auth-sidecar--end-sign-in ()
  (setq auth-sidecar--sign-in nil
        auth-sidecar-device-code nil)
  (when (get-buffer auth-sidecar--device-buffer)
    (kill-buffer auth-sidecar--device-buffer)))

;;;###autoload
(defun auth-sidecar-sign-in (&optional flow scopes)
  "Sign in interactively.  FLOW is \"deviceCode\", \"browser\" (interactively,
with a prefix argument: browser) or \"paste\" (the paste-back sign-in: the URL is
shown, and the address the browser ended on is asked with `read-string'); SCOPES a list of strings.  Returns at once; the
device code is shown in the \"*auth-sidecar sign-in*\" buffer and the echo area."
  (interactive (list (if current-prefix-arg "browser" auth-sidecar-default-flow)))
  (when auth-sidecar--sign-in
    (auth-sidecar--fail '(:code -51007 :message "a sign-in is already in progress (M-x auth-sidecar-cancel)"
                                :data (:name "interactiveInProgress"))))
  (let* ((conn (auth-sidecar--connection))
         (params (append (list :flow (or flow auth-sidecar-default-flow))
                         (and scopes (list :scopes (vconcat scopes)))))
         (state (list :connection conn)))
    (setq auth-sidecar--sign-in state)
    (jsonrpc-async-request
     conn 'acquireToken params
     :timeout auth-sidecar-sign-in-timeout
     :success-fn (lambda (result)
                   (when (eq auth-sidecar--sign-in state) (auth-sidecar--end-sign-in))
                   (auth-sidecar--message "signed in as %s"
                                          (auth-sidecar--describe-account (plist-get result :account)))
                   (run-hook-with-args 'auth-sidecar-sign-in-hook result))
     :error-fn (lambda (err)
                 (when (eq auth-sidecar--sign-in state) (auth-sidecar--end-sign-in))
                 (setq auth-sidecar-last-error err)
                 (auth-sidecar--message "sign-in failed: %s" (auth-sidecar--describe-error err)))
     :timeout-fn (lambda ()
                   (when (eq auth-sidecar--sign-in state) (auth-sidecar--end-sign-in))
                   (auth-sidecar--message "sign-in timed out")))
    ;; jsonrpc-async-request returns nil; its id is the connection's last request id
    ;; (the deviceCode notification confirms it with requestId).
    (ignore-errors
      (setq auth-sidecar--sign-in
            (plist-put state :id (jsonrpc--next-request-id conn))))
    nil))

(defun auth-sidecar-cancel ()
  "Cancel the interactive sign-in in progress ($/cancelRequest)."
  (interactive)
  (let ((s auth-sidecar--sign-in))
    (if (not (and s (plist-get s :id)))
        (auth-sidecar--message "no sign-in in progress")
      (jsonrpc-notify (plist-get s :connection) '$/cancelRequest (list :id (plist-get s :id))))))

;;;###autoload
(defun auth-sidecar-token (&optional scopes force-refresh)
  "Return an access token for SCOPES (a list of strings) without interaction.
Interactively (and with `called-interactively-p'), put it on the kill ring and show a
redacted prefix.  FORCE-REFRESH (prefix argument) skips the cached access token."
  (interactive (list nil current-prefix-arg))
  (let* ((params (append (and scopes (list :scopes (vconcat scopes)))
                         (and force-refresh (list :forceRefresh t))))
         (result (auth-sidecar-request 'acquireTokenSilent params))
         (token (plist-get result :accessToken)))
    (when (called-interactively-p 'any)
      (kill-new token))
    (auth-sidecar--message "token for %s (expires %s%s)%s: %s…"
                           (auth-sidecar--describe-account (plist-get result :account))
                           (format-time-string "%H:%M" (plist-get result :expiresOn))
                           (if (eq (plist-get result :fromCache) t) ", cached" "")
                           (if (called-interactively-p 'any) " copied to the kill ring" "")
                           (substring token 0 (min 12 (length token))))
    token))

;;;###autoload
(defun auth-sidecar-account ()
  "Show (and return) the current account plist, nil when nobody is signed in."
  (interactive)
  (let* ((result (auth-sidecar-request 'getCurrentAccount))
         (account (plist-get result :account)))
    (if account
        (auth-sidecar--message "signed in as %s, tenant %s, %s"
                               (auth-sidecar--describe-account account)
                               (plist-get account :tenantId)
                               (plist-get account :homeAccountId))
      (auth-sidecar--message "no account signed in%s"
                             (let ((prev (plist-get result :previousAccount)))
                               (if prev (format " (previously %s)"
                                                (auth-sidecar--describe-account prev))
                                 ""))))
    account))

(defvar-local auth-sidecar-graph-status nil
  "HTTP status of the Graph answer shown in this buffer.")

;;;###autoload
(defun auth-sidecar-graph (path &optional method body)
  "Call Microsoft Graph PATH (e.g. \"/me\") with METHOD (default GET) and BODY (a plist);
show the JSON answer in a buffer \"*auth-sidecar graph PATH*\" and return that buffer."
  (interactive (list (read-string "Graph path: " "/me")))
  (let* ((result (auth-sidecar-request
                  'callGraph (append (list :path path)
                                     (and method (list :method method))
                                     (and body (list :body body)))))
         (status (plist-get result :status))
         (answer (plist-get result :body))
         (buf (get-buffer-create (format "*auth-sidecar graph %s*" path))))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (if (stringp answer)
            (insert answer)
          (insert (json-serialize answer :null-object nil :false-object :json-false))
          (json-pretty-print-buffer))
        (goto-char (point-min)))
      (if (fboundp 'js-json-mode) (js-json-mode) (js-mode))
      (setq buffer-read-only t
            auth-sidecar-graph-status status)
      (local-set-key (kbd "q") #'quit-window))
    (unless noninteractive (pop-to-buffer buf))
    (auth-sidecar--message "%s %s: HTTP %s" (or method "GET") path status)
    buf))

;;;###autoload
(defun auth-sidecar-graph-me ()
  "Call Graph /me and show the JSON answer."
  (interactive)
  (auth-sidecar-graph "/me"))

;;;###autoload
(defun auth-sidecar-sign-out ()
  "Sign out the current account; return the account signed out."
  (interactive)
  (let* ((result (auth-sidecar-request 'signout))
         (account (plist-get result :account)))
    (auth-sidecar--message "signed out %s" (if account (auth-sidecar--describe-account account) ""))
    account))

(defun auth-sidecar-stop ()
  "Stop the sidecar: SIGTERM (it cancels what is in flight and flushes its cache)."
  (interactive)
  (let ((conn auth-sidecar--connection))
    (setq auth-sidecar--connection nil)
    (when auth-sidecar--sign-in (auth-sidecar--end-sign-in))
    (when conn
      (let ((proc (jsonrpc--process conn)))
        (when (process-live-p proc)
          (ignore-errors (signal-process proc 'term))
          (with-timeout (5 nil)
            (while (process-live-p proc) (accept-process-output proc 0.05))))
        (ignore-errors (jsonrpc-shutdown conn t))))))

(add-hook 'kill-emacs-hook #'auth-sidecar-stop)

(provide 'auth-sidecar)
;;; auth-sidecar.el ends here
