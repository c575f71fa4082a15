"""Errors in the exact shape the Microsoft identity platform uses.

Token-endpoint errors are JSON bodies::

    {"error": "invalid_grant",
     "error_description": "AADSTS700082: ...\\r\\nTrace ID: ...\\r\\nCorrelation ID: ...\\r\\nTimestamp: ...",
     "error_codes": [700082], "timestamp": "2024-05-01 10:00:00Z",
     "trace_id": "...", "correlation_id": "...",
     "error_uri": "https://login.microsoftonline.com/error?code=700082",
     "suberror": "...", "claims": "..."}      # suberror and claims only when relevant

B2C errors use the ``AADB2Cnnnnn:`` prefix instead of ``AADSTSnnnnn:``.
"""

import time
import uuid

# name: (error, code, message, http status)
CATALOG = {
    "missing_parameter": ("invalid_request", 900144,
                          "The request body must contain the following parameter: '{param}'.", 400),
    "unknown_client": ("unauthorized_client", 700016,
                       "Application with identifier '{client_id}' was not found in the directory "
                       "'{tenant}'. This can happen if the application has not been installed by the "
                       "administrator of the tenant or consented to by any user in the tenant.", 400),
    "redirect_mismatch": ("invalid_request", 50011,
                          "The redirect URI '{redirect_uri}' specified in the request does not match "
                          "the redirect URIs configured for the application '{client_id}'.", 400),
    "unsupported_response_type": ("unsupported_response_type", 700054,
                                  "response_type '{response_type}' is not enabled for the application.", 400),
    "pkce_required": ("invalid_request", 9002325,
                      "Proof Key for Code Exchange is required for cross-origin authorization code "
                      "redemption.", 400),
    "pkce_method": ("invalid_request", 501491,
                    "Invalid code_challenge or code_challenge_method; only S256 is supported.", 400),
    "pkce_mismatch": ("invalid_grant", 501481,
                      "The Code_Verifier does not match the code_challenge supplied in the "
                      "authorization request.", 400),
    "bad_code": ("invalid_grant", 70000,
                 "The provided value for the 'code' parameter is not valid.", 400),
    "code_redeemed": ("invalid_grant", 54005,
                      "OAuth2 Authorization code was already redeemed, please retry with a new valid "
                      "code or use an existing refresh token.", 400),
    "code_redirect_mismatch": ("invalid_grant", 500112,
                               "The reply address '{redirect_uri}' does not match the reply address "
                               "provided when requesting Authorization code.", 400),
    "bad_refresh_token": ("invalid_grant", 9002313,
                          "Invalid request. Request is malformed or invalid.", 400),
    "client_mismatch": ("invalid_grant", 70000,
                        "The provided value for the 'refresh_token' is not valid: the client is not a "
                        "member of the refresh token's family.", 400),
    "rt_expired": ("invalid_grant", 700082,
                   "The refresh token has expired due to inactivity. The token was issued on {issued} "
                   "and was inactive for {inactive}.", 400),
    "rt_revoked": ("invalid_grant", 50173,
                   "The provided grant has expired due to it being revoked, a fresh auth token is "
                   "needed. The user might have changed or reset their password.", 400),
    "b2c_rt_expired": ("invalid_grant", "AADB2C90080",
                       "The provided grant has expired. Please re-authenticate and try again.", 400),
    "mfa_required": ("interaction_required", 50076,
                     "Due to a configuration change made by your administrator, or because you moved "
                     "to a new location, you must use multi-factor authentication to access "
                     "'{resource}'.", 400),
    "mfa_enroll": ("interaction_required", 50079,
                   "Due to a configuration change made by your administrator, or because you moved "
                   "to a new location, you must enroll in multi-factor authentication to access "
                   "'{resource}'.", 400),
    "ca_required": ("interaction_required", 53003,
                    "Access has been blocked by Conditional Access policies. The access policy does "
                    "not allow token issuance.", 400),
    "ca_blocked": ("invalid_grant", 53003,
                   "Access has been blocked by Conditional Access policies. The access policy does "
                   "not allow token issuance.", 400),
    "consent_required": ("invalid_grant", 65001,
                         "The user or administrator has not consented to use the application with ID "
                         "'{client_id}'. Send an interactive authorization request for this user and "
                         "resource.", 400),
    "login_required": ("login_required", 50058,
                       "A silent sign-in request was sent but no user is signed in.", 400),
    "declined": ("access_denied", 65004, "User declined to consent to access the app.", 400),
    "cancelled": ("access_denied", 50126, "The user cancelled the sign-in.", 400),
    "authorization_pending": ("authorization_pending", 70016,
                              "OAuth 2.0 device flow error. Authorization is pending. Continue "
                              "polling.", 400),
    "slow_down": ("slow_down", 70019,
                  "OAuth 2.0 device flow error. Polling too fast; slow down.", 400),
    "expired_token": ("expired_token", 70020,
                      "The provided value for the input parameter 'device_code' is not valid. This "
                      "device code has expired.", 400),
    "authorization_declined": ("authorization_declined", 70000,
                               "The user declined to authorize the request.", 400),
    "bad_device_code": ("invalid_grant", 70000,
                        "The provided value for the input parameter 'device_code' is not valid.", 400),
    "tenant_not_found": ("invalid_tenant", 90002,
                         "Tenant '{tenant}' not found. Check to make sure you have the correct tenant "
                         "ID and are signing into the correct cloud.", 400),
    "invalid_scope": ("invalid_scope", 70011,
                      "The provided request must include a 'scope' input parameter. The provided "
                      "value for the input parameter 'scope' is not valid.", 400),
    "multiple_resources": ("invalid_scope", 28000,
                           "Provided value for the input parameter scope is not valid because it "
                           "contains more than one resource. Scope {scope} is not valid.", 400),
    "unsupported_grant_type": ("unsupported_grant_type", 70003,
                               "The app requested an unsupported grant type '{grant_type}'.", 400),
    "b2c_forgot_password": ("access_denied", "AADB2C90118", "The user has forgotten their password.", 400),
    "b2c_cancelled": ("access_denied", "AADB2C90091",
                      "The user has cancelled entering self-asserted information.", 400),
    "bad_req_cnf": ("invalid_request", 5002710,
                    "The request confirmation ('req_cnf') is not a valid JSON Web Key: {reason}.", 400),
    "b2c_unknown_policy": ("invalid_request", "AADB2C90008",
                           "The request does not contain a valid policy '{policy}'.", 400),
}


class OAuthError(Exception):
    """An identity-platform error; `fields` fill the message's {placeholders}."""

    def __init__(self, name, suberror=None, claims=None, subcode=None, **fields):
        error, code, message, status = CATALOG[name]
        super().__init__(name)
        self.name, self.error, self.code, self.status = name, error, code, status
        self.message = message.format(**fields) if fields else message
        self.suberror, self.claims, self.subcode = suberror, claims, subcode

    @property
    def prefix(self):
        return self.code if isinstance(self.code, str) else "AADSTS%d" % self.code

    def numeric_code(self):
        return int(self.code[6:]) if isinstance(self.code, str) else self.code

    def body(self, correlation_id=None, now=None, plain=False):
        """The JSON body the token endpoint (and friends) return.

        `plain`: a generic issuer's RFC 6749 body, only `error` and `error_description`
        (the message without the AADSTS prefix, trace or correlation ids)."""
        if plain:
            return {"error": self.error, "error_description": self.message}
        trace_id = str(uuid.uuid4())
        correlation_id = correlation_id or str(uuid.uuid4())
        stamp = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(now or time.time()))
        body = {
            "error": self.error,
            "error_description": "%s: %s\r\nTrace ID: %s\r\nCorrelation ID: %s\r\nTimestamp: %s" % (
                self.prefix, self.message, trace_id, correlation_id, stamp),
            "error_codes": [self.numeric_code()],
            "timestamp": stamp,
            "trace_id": trace_id,
            "correlation_id": correlation_id,
            "error_uri": "https://login.microsoftonline.com/error?code=%d" % self.numeric_code(),
        }
        if self.suberror:
            body["suberror"] = self.suberror
        if self.claims:
            body["claims"] = self.claims
        return body

    def redirect_params(self, correlation_id=None, now=None, plain=False):
        """The query/form parameters of an error sent back to a redirect URI."""
        body = self.body(correlation_id, now, plain)
        if plain:
            return body
        params = {"error": self.error, "error_description": body["error_description"],
                  "error_uri": body["error_uri"]}
        if self.subcode:
            params["error_subcode"] = self.subcode
        if self.suberror:
            params["suberror"] = self.suberror
        if self.claims:
            params["claims"] = self.claims
        return params
