"""Authority paths: which tenant (and B2C policy) a request names.

Accepted forms::

    /{tenant}/...                 tenant = common | organizations | consumers | GUID | domain
    /tfp/{tenant}/{policy}/...    Azure AD B2C, "trust framework policy" form
    /{tenant}/{policy}/...        Azure AD B2C, short form (tenant must be a B2C tenant)
    /issuers/{name}/...           a generic OpenID Connect issuer (IssuerCtx; see issuers.py)
"""

from .errors import OAuthError
from .state import MSA_TENANT_ID

META = {"common", "organizations", "consumers"}
_NOT_POLICY = {"v2.0", "oauth2", "discovery", ".well-known", "userrealm"}


class Ctx:
    """The authority a request was made against."""

    issuer_name = None   # a generic issuer's name; codes and refresh tokens are bound to it

    def __init__(self, segment, tenant, policy=None, tfp=False):
        self.segment, self.tenant, self.policy, self.tfp = segment, tenant, policy, tfp

    @property
    def b2c(self):
        return self.policy is not None

    @property
    def endpoint_path(self):
        """Path prefix of this authority's endpoints (B2C: without /tfp, as B2C does)."""
        if self.b2c:
            return "/%s/%s" % (self.segment, self.policy.lower())
        return "/" + self.segment

    def allows(self, user):
        """May `user` sign in through this authority?"""
        if self.b2c:
            return user["tid"] == self.tenant["id"]
        seg = self.segment.lower()
        tid = user["tid"]
        if seg == "consumers":
            return tid == MSA_TENANT_ID
        if seg in ("common", "organizations"):
            if tid == MSA_TENANT_ID:
                return seg == "common"
            return not _tenant_is_b2c(self, tid)
        return tid == self.tenant["id"]

    def issuer(self, base_url, tid):
        if self.b2c:
            return "%s/tfp/%s/%s/v2.0/" % (base_url, tid, self.policy)
        return "%s/%s/v2.0" % (base_url, tid)

    def discovery_issuer(self, base_url):
        seg = self.segment.lower()
        if self.b2c:
            return self.issuer(base_url, self.tenant["id"])
        if seg == "consumers":
            return self.issuer(base_url, MSA_TENANT_ID)
        if seg in META:
            return "%s/{tenantid}/v2.0" % base_url
        return self.issuer(base_url, self.tenant["id"])

    def tenant_id(self):
        return self.tenant["id"] if self.tenant else self.segment


class IssuerCtx(Ctx):
    """A generic OpenID Connect issuer at /issuers/{name}: every user of the directory may
    sign in; the issuer is the same for all of them."""

    def __init__(self, name):
        super().__init__("issuers/" + name, None)
        self.issuer_name = name

    def allows(self, user):
        return True

    def issuer(self, base_url, tid=None):
        return "%s/issuers/%s" % (base_url, self.issuer_name)

    discovery_issuer = issuer

    def tenant_id(self):
        return self.issuer_name


def _tenant_is_b2c(ctx, tid):
    return bool(ctx.directory.get(tid, {}).get("b2c"))


def parse(state, segments):
    """Split path segments into (Ctx, rest); raise OAuthError for unknown tenants/policies."""
    if segments and segments[0].lower() == "tfp" and len(segments) >= 3:
        tenant = state.find_tenant(segments[1])
        if tenant is None:
            raise OAuthError("tenant_not_found", tenant=segments[1])
        ctx = Ctx(segments[1], tenant, _policy(tenant, segments[2]), tfp=True)
        rest = segments[3:]
    else:
        seg = segments[0]
        tenant = None if seg.lower() in META else state.find_tenant(seg)
        if seg.lower() not in META and tenant is None:
            raise OAuthError("tenant_not_found", tenant=seg)
        if tenant and tenant["b2c"] and len(segments) > 1 and segments[1].lower() not in _NOT_POLICY:
            ctx, rest = Ctx(seg, tenant, _policy(tenant, segments[1])), segments[2:]
        else:
            ctx, rest = Ctx(seg, tenant), segments[1:]
    ctx.directory = state.tenants
    return ctx, rest


def _policy(tenant, name):
    for policy in tenant.get("policies", []):
        if policy.lower() == name.lower():
            return policy
    raise OAuthError("b2c_unknown_policy", policy=name)
