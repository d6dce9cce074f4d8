"""Common nouns by the entity type they stand for, so "a restaurant" reads like "Bistro Lumen" (ORG)."""

from __future__ import annotations

NOUN_TYPES: dict[str, str] = {
    **dict.fromkeys(("company", "restaurant", "bistro", "bakery", "cafe", "clinic", "hospital", "team", "vendor",
                     "firm", "startup", "agency", "store", "shop", "kitchen", "staff", "supplier", "committee",
                     "board", "bank", "business", "organisation", "organization", "provider", "customer",
                     "client", "department", "brand", "chain", "retailer", "manufacturer", "school"), "ORG"),
    **dict.fromkeys(("app", "application", "product", "device", "thermostat", "api", "software", "feature",
                     "platform", "service", "website", "site", "tool", "model", "version", "phone", "car",
                     "system", "unit", "battery", "dashboard", "menu", "slogan"), "PRODUCT"),
    **dict.fromkeys(("launch", "opening", "rollout", "campaign", "release", "relaunch", "migration", "outage",
                     "incident", "event", "festival", "project", "deal", "negotiation", "review", "trial",
                     "pilot", "beta", "recall"), "EVENT"),
    **dict.fromkeys(("manager", "engineer", "chef", "cook", "doctor", "nurse", "counsel", "officer", "lead",
                     "director", "founder", "owner", "executive", "analyst", "developer", "ceo", "cto", "cfo",
                     "coo", "lawyer", "critic", "patient", "user", "users", "buyer"), "PERSON"),
    **dict.fromkeys(("city", "region", "country", "warehouse", "town", "office", "site"), "PLACE"),
}
