"""Users in the admin, for admins (accounts.roles): a user's role is their group; their staff
flag follows it (``accounts.services.role_staff_sync``) and is never set by hand; only a
superuser makes superusers, gives permissions one by one, or changes a superuser."""

from typing import Any

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.http import HttpRequest

User = get_user_model()


class RoleUserAdmin(UserAdmin):
    list_display = ("username", "email", "is_active", "is_staff", "is_superuser", "last_login")
    list_filter = ("groups", "is_active", "is_staff", "is_superuser")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = ["is_staff", "last_login", "date_joined"]
        if not request.user.is_superuser:
            fields += ["is_superuser", "user_permissions"]
        return fields

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return super().has_delete_permission(request, obj)


if admin.site.is_registered(User):
    admin.site.unregister(User)
admin.site.register(User, RoleUserAdmin)
