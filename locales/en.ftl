# signupd in English: every word a visitor reads on the pages and in the two mails.
#
# This file is the reference: every other language has exactly its message ids, and uses every
# variable ($list, $site, ...) a message here uses. Variables are filled in by signupd.
#
# Register: plain, direct "you"; short sentences.
# Glossary:
#   sign up (verb) / signup (noun)  - asking to receive a list by email
#   confirm                        - pressing the button behind the mailed link
#   list                           - what one signs up for (a newsletter)
#   remove (my address)            - leaving a list; we do not say "unsubscribe" to visitors
#   preferences / preference page  - the page where one picks the lists one gets
#   email address                  - the visitor's address
#   link                           - the link in a mail

## Mail dates

# A date and time in a mail. $day and $year are numbers, $month is one of the month names below, $time is "14:05".
date-format = { $day } { $month } { $year }, { $time } UTC
date-month-1 = January
date-month-2 = February
date-month-3 = March
date-month-4 = April
date-month-5 = May
date-month-6 = June
date-month-7 = July
date-month-8 = August
date-month-9 = September
date-month-10 = October
date-month-11 = November
date-month-12 = December

## Durations: "10 minutes", "1 day". CLDR plural categories on $n.

duration-second =
    { $n ->
        [one] { $n } second
       *[other] { $n } seconds
    }
duration-minute =
    { $n ->
        [one] { $n } minute
       *[other] { $n } minutes
    }
duration-hour =
    { $n ->
        [one] { $n } hour
       *[other] { $n } hours
    }
duration-day =
    { $n ->
        [one] { $n } day
       *[other] { $n } days
    }
# Joins the last item of a list to the ones before it ($init, already joined by
# duration-separator): "3 per 10 minutes and 10 per 1 day".
duration-and = { $init } and { $last }
# Between the items of a list before its last (a string literal keeps the space).
duration-separator = {", "}
# A rate limit: "3 per 10 minutes". $duration is one of the duration messages above.
duration-per = { $n } per { $duration }

## page

# $site is the operator's site name.
page-back-to = Back to { $site }
page-privacy = What we store and for how long
# Before the links to this form in the list's other languages.
page-languages = In other languages:

## errors

errors-unavailable-title = Please try again
errors-unavailable = This could not be done just now. Please try again in a minute.
errors-not-found-title = Not found
errors-not-found = There is no signup form here.
errors-not-found-link = Go to the signup form
errors-incomplete-title = This link is incomplete
errors-incomplete = The link seems to be cut off or changed. Open it again from the mail, or copy the whole address into your browser.
# A press of a form's button whose request was refused (a wrong method, a body too large or of another kind).
errors-refused-title = This could not be done
errors-refused = The request could not be read. Please go back to the page and try again.
# A request body that did not arrive within the server's time limit; plain text.
errors-timeout = The request did not arrive in time. Please try again.
# A page that could not be made (a fault of signupd); plain text.
errors-internal = Something went wrong on our side. Please try again in a minute.

## signup

signup-title = Sign up: { $list }
signup-heading = Sign up for { $list }
signup-intro = Enter your email address. We will send you a link; you are signed up only after you open it and confirm.
signup-email-label = Email address
signup-honeypot-label = Leave this field empty
signup-submit = Sign up
signup-choose-title = Sign up
signup-choose = Choose a list:
signup-several-title = Sign up
signup-several-heading = Sign up
signup-lists-legend = Which lists would you like?
signup-several-consent = Email me the lists I ticked. I can unsubscribe from each at any time.
signup-no-list-ticked = Please tick at least one list.
# After a form field's label, when the field may be left empty.
signup-optional = optional
# A select field's first, empty option.
signup-choose-option = Choose one
# A required form field left empty: $field is its label.
signup-field-missing = Please fill in “{ $field }”.
# A form field whose value its rule refuses: $field is its label.
signup-field-invalid = Please check “{ $field }”: choose one of its options, or keep it shorter and on one line.
signup-unreadable = The form could not be read. Please try again.
signup-unsupported = The form was sent in a format this service does not understand.
signup-too-large = The form was too large. Please enter just your email address.
signup-origin-not-allowed = This form cannot be used from the site it was sent from.
signup-invalid-email = Please enter a valid email address, like name@example.com.
signup-consent-required = Please tick the box to agree to receive these emails.
signup-unknown-list = This form points to a list that does not exist.
signup-invalid-source = This form sends a source this service does not accept. Please tell the site's owner.
signup-unknown-tag = This form sends a tag the list does not know. Please tell the site's owner.
signup-domain-not-allowed = Addresses at this domain cannot be used to sign up here. Please use another email address.
signup-rate-limited = Too many signups from your network. Please try again later.
signup-storage-unavailable = Your signup could not be saved just now. Please try again in a minute.

## check inbox

check-inbox-title = Check your inbox
check-inbox-sent = If the address can receive mail, a message is on its way. Open the link in it and press the button to confirm.
check-inbox-sent-for = If the address can receive mail, a message about { $list } is on its way. Open the link in it and press the button to confirm.
check-inbox-nothing-arrived = Nothing arrived after a few minutes? Look in your spam folder. The link works for a limited time; you can simply sign up again.
# The "open your inbox" link: $provider is its name ("Open Gmail").
check-inbox-open-inbox = Open { $provider }

## surge

surge-title = One more step
surge-unusual = This site is seeing unusual traffic right now, so it sends confirmation emails only to people who ask for one.
surge-ask = Press the button, and your confirmation email is on its way.
surge-button = Send my confirmation email
surge-not-you = Did not sign up? Close this page, and nothing is sent.

## confirm

confirm-title = Confirm your signup: { $list }
confirm-heading = Confirm your signup
confirm-intro = You asked to receive { $list } by email. Press the button to confirm; nothing is sent until you do.
confirm-email-label = Your email address
confirm-email-hint = Type the address this mail was sent to. This keeps automatic link checkers from confirming for you.
confirm-button = Confirm signup
confirm-not-you = Didn't ask for this? Just close this page; without confirmation you will get nothing more.
confirm-wrong-address = That is not the address this link was sent to. Please type it again.
confirm-already-title = Already confirmed
confirm-already = This address is already signed up for { $list }. Nothing more to do.
confirm-done-title = You are signed up
confirm-done = Thank you. Your address is now signed up for { $list }.
confirm-done-any = Thank you. Your address is now signed up.
confirm-expired-title = This link has expired
confirm-expired = The confirmation link is no longer valid: it expired, was replaced by a newer mail, or was already used. You can sign up again.
confirm-sign-up-again = Sign up again

## manage

manage-title = Remove my address
manage-intro = This removes your address from { $list }. You will get no more mail from it.
manage-intro-any = This removes your address from the list this link was sent for. You will get no more mail from it.
manage-button = Remove my address
manage-removed-title = Address removed
manage-removed = Your address was removed from { $list }. You will get no more mail from it.
manage-removed-any = Your address was removed. You will get no more mail from this list.

## preferences

preferences-title = Your email preferences
preferences-intro = Tick the lists you want to get from { $site }, untick the ones you no longer want, and save.
preferences-legend = Lists
preferences-pending = Pending: waiting for your confirmation.
# Before the form fields a list's row keeps, shown read-only.
preferences-kept = What you told us when you signed up:
preferences-save = Save
preferences-remove-all-heading = Remove my address
preferences-remove-all-intro = Or remove your address from all of these lists at once. You will get no more mail from them.
preferences-remove-all = Remove me from all
preferences-saved-title = Preferences saved
preferences-saved = Your choices for { $site } were saved. You get mail only from the lists you ticked.
preferences-saved-any = Your choices were saved. You get mail only from the lists you ticked.
preferences-unreadable-title = The form could not be read
preferences-unreadable = Nothing was changed. Please open the link from the mail again and save once more.

## privacy

privacy-title = Privacy: { $list }
privacy-heading = What happens to your address
privacy-intro = This page describes what is stored when you sign up for { $list }, and for how long.
privacy-stored-heading = What is stored
privacy-stored = Your email address, the list, the version of the consent text you agreed to ({ $version }) and that text itself, when you signed up, and when and how you confirmed (including how long after the mail). If the form names them, also the place you signed up from (such as “homepage-footer”) and the topics it lists.
# The list's form fields: $fields are their labels, already joined ("name and company").
privacy-fields = The form also asks for { $fields }. What you enter there is stored with your signup, for as long as the rest, and shown on your preferences page.
# $limits is a list of rates, already joined ("3 per 10 minutes and 10 per 1 day").
privacy-no-ip = Your IP address is not stored. To limit abuse, signupd counts signups per network under a one-way hash of the network, never the address itself: { $limits }. A counter covers { $duration } at the most and is deleted at the next cleanup after that.
privacy-mail-heading = The mails
privacy-mail = You get one mail with a confirmation link, and at most one new one every { $duration } if you sign up again. Nothing else is sent until you confirm.
privacy-unconfirmed = If you do not confirm, the link stops working { $duration } after the last mail, and your address is deleted at the next cleanup after that.
privacy-neighbourhood = All networks of one neighbourhood (a block of addresses of one provider) are also counted together: { $limits }.
privacy-never-mailed = If the confirmation mail could not be sent yet (when many people sign up at once), your address is deleted { $duration } after you signed up, mailed or not.
privacy-cap = So that nobody can flood your inbox by entering your address on many forms, at most { $n } confirmation mails go to one address in any 24 hours, over all lists of this service. For that, a one-way hash of your address is kept with the time of each such mail, for one day.
privacy-reputation = When you confirm, a one-way hash of your network (a block of addresses of one provider) is kept with the day, for { $duration }: mail to networks where people confirm goes first when many sign up at once. Nothing else about the confirmation is kept with it.
privacy-removal-heading = Removing your address
privacy-removal = Every mail has a link to remove your address. When you use it, your address is deleted. Only a one-way hash of it is kept, so that it is never mailed again without a new confirmation — or never, if you said the signup was not yours.
privacy-shared = When you confirm or remove your address, the operator's own systems are told, with your address and what you agreed to.
# $address is the operator's contact email address.
privacy-contact = Questions? Write to { $address }.

## mail

mail-greeting = Hello,
mail-asked = someone — hopefully you — asked to receive { $list } at this address.
# $button is the text of the button on the confirmation page (confirm-button).
mail-how = To confirm, open this link and press the “{ $button }” button:
mail-confirm-link = Confirm my signup
mail-copy = Or copy this address into your browser:
# $date is written with date-format.
mail-until = The link works until { $date }. Until you confirm, nothing else will be sent.
mail-not-you = Didn't ask for this? You can ignore this mail, or remove this address for good:
mail-remove-for-good = Remove this address
mail-welcome = your address is now signed up for { $list }. Thank you for confirming.
# The welcome mail's link opens the preference page (where one may also leave): the words say so, not "remove".
mail-preferences-any-time = On your preference page you can choose what you get from us, or leave, at any time:
mail-preferences-link = Open my preference page
mail-automated = This is an automated message.
mail-privacy = What we store and for how long:
mail-confirm-subject = Please confirm your signup
mail-welcome-subject = You are signed up

## language

# This language's own name, written in it ("Deutsch", "Français", "日本語"): the link to the form in
# this language on a list's form that offers several.
language-name = English
