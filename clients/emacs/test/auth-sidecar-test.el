;;; auth-sidecar-test.el --- ERT tests for auth-sidecar.el -*- lexical-binding: t; -*-

;; Run by test/run.sh, which starts the mock identity platform and exports MOCK_URL,
;; MOCK_CA, MOCK_CLIENT_ID, TEST_TMP, AUTH_SIDECAR_BIN, SCRIPTED_BROWSER.  The tests
;; run in name order (ERT sorts them) and share one signed-in session: 01 signs in,
;; later ones use it.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'auth-sidecar)

(defvar auth-sidecar-test--messages nil "Messages shown, newest first.")

(defun auth-sidecar-test--record (orig fmt &rest args)
  (when fmt (push (apply #'format-message fmt args) auth-sidecar-test--messages))
  (apply orig fmt args))
(advice-add 'message :around #'auth-sidecar-test--record)

(defun auth-sidecar-test--env (name)
  (or (getenv name) (error "%s is not set (run test/run.sh)" name)))

(defun auth-sidecar-test--configuration (&rest overrides)
  (let ((url (auth-sidecar-test--env "MOCK_URL"))
        (conf (list :clientId (auth-sidecar-test--env "MOCK_CLIENT_ID")
                    :knownAuthorities ["127.0.0.1"]
                    :cache (list :path (expand-file-name "emacs-cache.json"
                                                         (auth-sidecar-test--env "TEST_TMP"))))))
    (setq conf (append (list :authority (concat url "/common") :graphEndpoint (concat url "/")) conf))
    (cl-loop for (k v) on overrides by #'cddr do (setq conf (plist-put conf k v)))
    conf))

(defun auth-sidecar-test--setup (&rest overrides)
  (auth-sidecar-stop)
  (setq auth-sidecar-program (auth-sidecar-test--env "AUTH_SIDECAR_BIN")
        auth-sidecar-environment (list (concat "SSL_CERT_FILE=" (auth-sidecar-test--env "MOCK_CA")))
        auth-sidecar-configuration (apply #'auth-sidecar-test--configuration overrides)))

(defun auth-sidecar-test--wait (what pred &optional seconds)
  (let ((deadline (+ (float-time) (or seconds 15))))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall pred) (ert-fail (format "timed out waiting for %s" what)))))

(defun auth-sidecar-test--message-p (substring)
  (cl-some (lambda (m) (string-search substring m)) auth-sidecar-test--messages))

(defun auth-sidecar-test--wait-message (substring)
  (auth-sidecar-test--wait (format "message %S" substring)
                           (lambda () (auth-sidecar-test--message-p substring))))

(defun auth-sidecar-test--admin (path body)
  (with-temp-buffer
    (let ((rc (call-process "curl" nil t nil "-sS" "--fail" "--max-time" "10"
                            "--cacert" (auth-sidecar-test--env "MOCK_CA")
                            "-H" "Content-Type: application/json" "-X" "POST"
                            "-d" (json-serialize body)
                            (concat (auth-sidecar-test--env "MOCK_URL") path))))
      (unless (eql rc 0) (ert-fail (format "admin %s: %s" path (buffer-string))))
      (goto-char (point-min))
      (json-parse-buffer :object-type 'plist))))

(defmacro auth-sidecar-test--should-fail (code &rest body)
  "BODY signals `auth-sidecar-error' with JSON-RPC error CODE; return the message."
  (declare (indent 1))
  `(let ((err (should-error (progn ,@body) :type 'auth-sidecar-error)))
     (should (eql (plist-get auth-sidecar-last-error :code) ,code))
     (error-message-string err)))

(ert-deftest auth-sidecar-test-00-before-sign-in ()
  (auth-sidecar-test--setup)
  (should (null (auth-sidecar-account)))
  (should (auth-sidecar-test--message-p "auth-sidecar: no account signed in"))
  (let ((msg (auth-sidecar-test--should-fail -50002 (auth-sidecar-token))))
    (should (string-search "interactionRequired" msg))
    (should (string-search "auth-sidecar-sign-in" msg))))

(ert-deftest auth-sidecar-test-01-device-code-sign-in ()
  (auth-sidecar-test--setup)
  (setq auth-sidecar-test--messages nil)
  (let (signed-in)
    (let ((auth-sidecar-sign-in-hook (list (lambda (r) (setq signed-in r)))))
      (should (null (auth-sidecar-sign-in)))           ; returns at once
      (auth-sidecar-test--wait "device code" (lambda () auth-sidecar-device-code))
      (let ((code (plist-get auth-sidecar-device-code :userCode)))
        (with-current-buffer "*auth-sidecar sign-in*"
          (should (string-search (concat "Code: " code) (buffer-string)))
          (should (string-search (concat (getenv "MOCK_URL") "/devicelogin") (buffer-string))))
        (should (auth-sidecar-test--message-p (concat "enter the code " code)))
        ;; a second sign-in meanwhile is refused
        (auth-sidecar-test--should-fail -51007 (auth-sidecar-sign-in))
        (should (equal (plist-get (auth-sidecar-test--admin
                                   "/_admin/devicecode" (list :user_code code :action "approve"))
                                  :status)
                       "approved")))
      (auth-sidecar-test--wait "sign-in" (lambda () signed-in)))
    (should (auth-sidecar-test--message-p "auth-sidecar: signed in as Alice Example <alice@contoso.com>"))
    (should (string-prefix-p "eyJ" (plist-get signed-in :accessToken)))
    (should (null (get-buffer "*auth-sidecar sign-in*")))
    (should (null auth-sidecar-device-code))))

(ert-deftest auth-sidecar-test-02-token ()
  (setq auth-sidecar-test--messages nil)
  (let ((token (auth-sidecar-token)))
    (should (string-match-p "\\`eyJ[[:alnum:]_-]+\\.[[:alnum:]_-]+\\.[[:alnum:]_-]+\\'" token))
    (let ((m (car auth-sidecar-test--messages)))
      (should (string-search "token for Alice Example <alice@contoso.com>" m))
      (should (string-search ", cached" m))
      (should (string-search (substring token 0 12) m))
      (should-not (string-search (substring token 0 40) m))))
  ;; interactively: onto the kill ring
  (setq kill-ring nil)
  (let ((token (funcall-interactively #'auth-sidecar-token)))
    (should (equal (current-kill 0) token))
    (should (string-search "copied to the kill ring" (car auth-sidecar-test--messages))))
  ;; scopes and forced refresh
  (auth-sidecar-token '("User.Read") t)
  (should-not (string-search ", cached" (car auth-sidecar-test--messages))))

(ert-deftest auth-sidecar-test-03-account ()
  (let ((account (auth-sidecar-account)))
    (should (equal (plist-get account :username) "alice@contoso.com"))
    (should (equal (plist-get account :tenantId) "aaaabbbb-0000-cccc-1111-dddd2222eeee"))
    (should (string-search "auth-sidecar: signed in as Alice Example <alice@contoso.com>, tenant aaaabbbb"
                           (car auth-sidecar-test--messages)))))

(ert-deftest auth-sidecar-test-04-graph-me ()
  (let ((buf (auth-sidecar-graph-me)))
    (should (equal (buffer-name buf) "*auth-sidecar graph /me*"))
    (with-current-buffer buf
      (should buffer-read-only)
      (should (eql auth-sidecar-graph-status 200))
      (should (derived-mode-p 'js-mode))
      (let ((body (json-parse-string (buffer-string) :object-type 'alist :null-object :null)))
        (should (equal (alist-get 'userPrincipalName body) "alice@contoso.com"))
        (should (equal (alist-get 'displayName body) "Alice Example"))
        (should (eq (alist-get 'jobTitle body) :null)))
      (should (> (count-lines (point-min) (point-max)) 5)))  ; pretty printed
    (should (string-search "GET /me: HTTP 200" (car auth-sidecar-test--messages)))
    ;; again: same buffer
    (should (eq (auth-sidecar-graph-me) buf))))

(ert-deftest auth-sidecar-test-05-sign-out ()
  (let ((account (auth-sidecar-sign-out)))
    (should (equal (plist-get account :username) "alice@contoso.com")))
  (should (string-search "auth-sidecar: signed out Alice Example <alice@contoso.com>"
                         (car auth-sidecar-test--messages)))
  (should (null (auth-sidecar-account)))
  (auth-sidecar-test--should-fail -50002 (auth-sidecar-token)))

(ert-deftest auth-sidecar-test-06-cancel ()
  (setq auth-sidecar-test--messages nil)
  (auth-sidecar-sign-in "deviceCode")
  (auth-sidecar-test--wait "device code" (lambda () auth-sidecar-device-code))
  (auth-sidecar-cancel)
  (auth-sidecar-test--wait-message "sign-in failed")
  (should (string-search "-32800" (car auth-sidecar-test--messages)))
  (should (eql (plist-get auth-sidecar-last-error :code) -32800))
  (should (null (get-buffer "*auth-sidecar sign-in*")))
  ;; a new sign-in can start again
  (auth-sidecar-sign-in)
  (auth-sidecar-test--wait "device code" (lambda () auth-sidecar-device-code))
  (auth-sidecar-cancel)
  (auth-sidecar-test--wait "second cancel" (lambda () (null auth-sidecar-device-code))))

(ert-deftest auth-sidecar-test-07-browser-system ()
  (auth-sidecar-test--setup)
  (setq auth-sidecar-environment
        (append (list (concat "BROWSER=" (auth-sidecar-test--env "SCRIPTED_BROWSER"))
                      (concat "SCRIPTED_BROWSER_CA=" (getenv "MOCK_CA")))
                auth-sidecar-environment))
  (setq auth-sidecar-test--messages nil)
  (auth-sidecar-sign-in "browser")
  (auth-sidecar-test--wait-message "signed in as Alice Example")
  (auth-sidecar-sign-out))

(ert-deftest auth-sidecar-test-08-browser-client ()
  (auth-sidecar-test--setup :browser "client")
  (setq auth-sidecar-test--messages nil)
  (let* ((opened nil)
         (auth-sidecar-open-url-function
          (lambda (url)
            (setq opened url)
            (let ((process-environment (cons (concat "SCRIPTED_BROWSER_CA=" (getenv "MOCK_CA"))
                                             process-environment)))
              (call-process "python3" nil 0 nil (getenv "SCRIPTED_BROWSER") url)))))
    (auth-sidecar-sign-in "browser")
    (auth-sidecar-test--wait-message "signed in as Alice Example")
    (should (string-search "/common/oauth2/v2.0/authorize?" opened))
    (should (auth-sidecar-test--message-p "opened the sign-in page"))))

(ert-deftest auth-sidecar-test-08a-paste-back ()
  "The paste-back sign-in: the URL shown, the address asked with `read-string'."
  (auth-sidecar-sign-out)
  (auth-sidecar-test--setup)
  (setq auth-sidecar-test--messages nil)
  (let ((prompted nil))
    (cl-letf (((symbol-function 'read-string)
               (lambda (prompt &rest _)
                 ;; The user: opens the URL in the scripted browser, copies the address it ends on.
                 (setq prompted prompt)
                 (let ((url (current-kill 0))
                       (process-environment (append (list (concat "SCRIPTED_BROWSER_CA=" (getenv "MOCK_CA"))
                                                          "SCRIPTED_BROWSER_ADDRESS=1")
                                                    process-environment)))
                   (with-temp-buffer
                     (should (eql 0 (call-process "python3" nil t nil (getenv "SCRIPTED_BROWSER") url)))
                     (string-trim (buffer-string)))))))
      (auth-sidecar-sign-in "paste")
      (auth-sidecar-test--wait-message "signed in as Alice Example"))
    (should (string-search "paste the address" prompted))
    (should (auth-sidecar-test--message-p "redirect_uri=http%3A%2F%2Flocalhost&")))
  ;; The user gives up: the sign-in fails as cancelled.
  (cl-letf (((symbol-function 'read-string) (lambda (&rest _) "")))
    (auth-sidecar-sign-in "paste")
    (auth-sidecar-test--wait-message "sign-in failed"))
  (should (eql (plist-get auth-sidecar-last-error :code) -50005)))

(ert-deftest auth-sidecar-test-09-restart-reads-cache ()
  (auth-sidecar-stop)
  (should (null auth-sidecar--connection))
  (should (equal (plist-get (auth-sidecar-account) :username) "alice@contoso.com")))

(ert-deftest auth-sidecar-test-09a-profile ()
  "`auth-sidecar-profile' starts the sidecar with --profile NAME of its configuration file."
  (let* ((tmp (auth-sidecar-test--env "TEST_TMP"))
         (file (expand-file-name "profiles.json" tmp))
         (shared (auth-sidecar-test--configuration)))
    (with-temp-file file
      (insert (json-serialize
               (list :clientId (plist-get shared :clientId) :authority (plist-get shared :authority)
                     :knownAuthorities ["127.0.0.1"] :defaultProfile "empty"
                     :profiles (list :lab (list :cache (plist-get shared :cache))
                                     :empty (list :cache (list :path (expand-file-name "empty.json" tmp))))))))
    (unwind-protect
        (progn
          (auth-sidecar-test--setup)
          (setq auth-sidecar-configuration nil
                auth-sidecar-profile "lab"
                auth-sidecar-environment (cons (concat "AUTH_SIDECAR_CONFIG=" file) auth-sidecar-environment))
          (should (equal (plist-get (auth-sidecar-account) :username) "alice@contoso.com"))
          (auth-sidecar-stop)
          (setq auth-sidecar-profile nil)  ; the file's default profile, whose cache is empty
          (should (null (auth-sidecar-account))))
      (setq auth-sidecar-profile nil)
      (auth-sidecar-stop))))

(ert-deftest auth-sidecar-test-10-configuration-errors ()
  (auth-sidecar-test--setup :authority "http://example.com/common")
  (let ((msg (auth-sidecar-test--should-fail -32602 (auth-sidecar-account))))
    (should (string-search "invalidParams" msg)))
  (auth-sidecar-test--setup)
  (setq auth-sidecar-program (expand-file-name "no-such-binary" (getenv "TEST_TMP")))
  (auth-sidecar-test--should-fail -32603 (auth-sidecar-account))
  (auth-sidecar-stop))

(ert-deftest auth-sidecar-test-10a-configuration-file-typo ()
  "A mistyped key in the configuration file: the sidecar exits at once, and the error shown
is its own line naming the file, the key and the key it meant (not \"Server died\")."
  (let ((file (expand-file-name "typo.json" (auth-sidecar-test--env "TEST_TMP"))))
    (with-temp-file file (insert "{\"clientid\": \"11111111-2222-3333-4444-555555555555\"}"))
    (unwind-protect
        (progn
          (auth-sidecar-test--setup)
          (setq auth-sidecar-configuration nil
                auth-sidecar-environment (cons (concat "AUTH_SIDECAR_CONFIG=" file) auth-sidecar-environment))
          (let ((err (should-error (auth-sidecar-account) :type 'auth-sidecar-error)))
            (should (string-search "unknown key 'clientid' (did you mean 'clientId'?)" (error-message-string err)))
            (should (string-search file (error-message-string err))))
          ;; The same when the sidecar has already exited before the request is written.
          (let ((conn (auth-sidecar--start)))
            (with-timeout (10 (ert-fail "the sidecar did not exit"))
              (while (jsonrpc-running-p conn) (accept-process-output nil 0.05)))
            (let ((err (should-error (auth-sidecar--send conn 'getCurrentAccount nil)
                                     :type 'auth-sidecar-error)))
              (should (string-search "did you mean 'clientId'?" (error-message-string err))))))
      (auth-sidecar-stop))))

(ert-deftest auth-sidecar-test-10b-no-configuration ()
  "No configuration at all: the server's own -32002 names the file to write."
  (unwind-protect
      (progn
        (auth-sidecar-test--setup)
        (setq auth-sidecar-configuration nil)
        (let ((msg (auth-sidecar-test--should-fail -32002 (auth-sidecar-account))))
          (should (string-search (expand-file-name "auth-sidecar/config.json" (getenv "XDG_CONFIG_HOME")) msg))
          (should (string-search "--client-id" msg))))
    (auth-sidecar-stop)))

(defun auth-sidecar-test--sign-in-fails (flow expected &rest overrides)
  "A FLOW sign-in with OVERRIDES fails within 10 s with a message holding EXPECTED."
  (apply #'auth-sidecar-test--setup overrides)
  (setq auth-sidecar-environment
        (append (list (concat "BROWSER=" (auth-sidecar-test--env "SCRIPTED_BROWSER"))
                      (concat "SCRIPTED_BROWSER_CA=" (getenv "MOCK_CA")))
                auth-sidecar-environment))
  (setq auth-sidecar-test--messages nil)
  (let ((started (float-time)))
    (unwind-protect
        (progn
          (auth-sidecar-sign-in flow)
          (auth-sidecar-test--wait (format "message %S" expected)
                                   (lambda () (auth-sidecar-test--message-p expected)) 10)
          (should (< (- (float-time) started) 10)))
      (auth-sidecar-stop))))

(ert-deftest auth-sidecar-test-10c-wrong-client-id ()
  "A client id the service does not know: the browser sign-in fails at once (AADSTS700016),
instead of waiting the interactive time limit for a redirect that will not come."
  (auth-sidecar-test--sign-in-fails "browser" "AADSTS700016"
                                    :clientId "99999999-8888-7777-6666-555555555555")
  (should (auth-sidecar-test--message-p "clientId")))

(ert-deftest auth-sidecar-test-10d-service-unreachable ()
  "The identity service out of reach: both sign-ins fail at once, naming what to check."
  (dolist (flow '("browser" "deviceCode"))
    (auth-sidecar-test--sign-in-fails
     flow "network failure reaching the identity service (https://127.0.0.1:9)"
     :authority "https://127.0.0.1:9/common")
    (should (auth-sidecar-test--message-p "check the network connection"))))

(ert-deftest auth-sidecar-test-11-jsonrpc-shutdown-exit ()
  "Plain jsonrpc.el (as Eglot uses it) sends `\"params\": null' with shutdown and exit;
the sidecar answers shutdown and then exits with status 0."
  (let* ((proc nil)
         (conn (make-instance
                'jsonrpc-process-connection
                :name "auth-sidecar-lsp-way"
                :process (lambda ()
                           (setq proc (make-process
                                       :name "auth-sidecar-lsp-way"
                                       :command (list (auth-sidecar-test--env "AUTH_SIDECAR_BIN")
                                                      "--client-id" "11111111-2222-3333-4444-555555555555"
                                                      "--cache" "memory")
                                       :connection-type 'pipe
                                       :coding 'utf-8-emacs-unix
                                       :noquery t
                                       :stderr (get-buffer-create "*auth-sidecar-lsp-way stderr*")))))))
    (should (null (jsonrpc-request conn :shutdown nil :timeout 10)))
    (jsonrpc-notify conn :exit nil)
    (auth-sidecar-test--wait "the sidecar to exit" (lambda () (not (process-live-p proc))) 10)
    (should (eql (process-exit-status proc) 0))))

;;; auth-sidecar-test.el ends here
